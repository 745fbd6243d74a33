#include "map_shim.h"

#include <dlfcn.h>
#include <errno.h>
#include <sys/mman.h>

#include <atomic>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // as in core/weights/slab_pool.cpp
#endif

namespace memra::tests {
namespace {

std::atomic<bool> g_armed{false};
std::atomic<MapFault::Kind> g_kind{MapFault::Kind::kRefuseMap};
std::atomic<int> g_error{0};
std::atomic<uint64_t> g_faults{0};

// The function a call would have reached without the shim: a sanitizer's interceptor where the
// executable carries one (clang links the runtime statically, and its weak `mmap` then yields to
// this strong one; the interceptor is still reachable by its own name), else the next definition
// (libc, or gcc's shared sanitizer runtime).
template <typename Fn>
Fn forward(const char *interceptor, const char *name) {
    void *fn = dlsym(RTLD_DEFAULT, interceptor);
    if (!fn) fn = dlsym(RTLD_NEXT, name);
    return reinterpret_cast<Fn>(fn);
}

using MmapFn = void *(*)(void *, size_t, int, int, int, off_t);
using MadviseFn = int (*)(void *, size_t, int);

MmapFn real_mmap() {
    static MmapFn fn = forward<MmapFn>("__interceptor_mmap", "mmap");
    return fn;
}

MadviseFn real_madvise() {
    static MadviseFn fn = forward<MadviseFn>("__interceptor_madvise", "madvise");
    return fn;
}

bool armed_for(MapFault::Kind kind) { return g_armed.load() && g_kind.load() == kind; }

}  // namespace

ArmedMapFault::ArmedMapFault(const MapFault &fault) {
    g_kind = fault.kind;
    g_error = fault.error;
    g_faults = 0;
    g_armed = true;
}

ArmedMapFault::~ArmedMapFault() { g_armed = false; }

uint64_t ArmedMapFault::faults() const { return g_faults.load(); }

}  // namespace memra::tests

using namespace memra::tests;

extern "C" __attribute__((visibility("default"))) void *mmap(void *addr, size_t length, int prot, int flags, int fd,
                                                            off_t offset) {
    constexpr int kPoolFlags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
    if (armed_for(MapFault::Kind::kRefuseMap) && fd == -1 && (flags & kPoolFlags) == kPoolFlags &&
        prot == (PROT_READ | PROT_WRITE)) {
        ++g_faults;
        errno = g_error.load();
        return MAP_FAILED;
    }
    return real_mmap()(addr, length, prot, flags, fd, offset);
}

extern "C" __attribute__((visibility("default"))) void *mmap64(void *addr, size_t length, int prot, int flags, int fd,
                                                              off_t offset) {
    return mmap(addr, length, prot, flags, fd, offset);
}

extern "C" __attribute__((visibility("default"))) int madvise(void *addr, size_t length, int advice) {
    if (advice == MADV_POPULATE_WRITE &&
        (armed_for(MapFault::Kind::kRefusePopulate) || armed_for(MapFault::Kind::kNoPopulate))) {
        ++g_faults;
        errno = armed_for(MapFault::Kind::kNoPopulate) ? EINVAL : g_error.load();
        return -1;
    }
    return real_madvise()(addr, length, advice);
}
