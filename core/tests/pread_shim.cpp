#include "pread_shim.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>

namespace memra::tests {
namespace {

std::mutex g_mutex;
std::mutex g_tear_mutex;  // kChangeMidRead's tears, one at a time
bool g_armed = false;
PreadFault g_fault;
dev_t g_dev;
ino_t g_ino;
std::atomic<uint64_t> g_faults{0};
std::atomic<uint64_t> g_calls{0};
std::atomic<uint64_t> g_reads{0};

using PreadFn = ssize_t (*)(int, void *, size_t, off_t);

PreadFn real_pread() {
    static PreadFn fn = reinterpret_cast<PreadFn>(dlsym(RTLD_NEXT, "pread"));
    return fn;
}

// fork(): a child inherits g_mutex as it was at the fork: held, if another thread was inside a
// critical section below then, by a thread that does not exist in the child, whose first read
// then waits forever (Fork.ChildOfAProcessWhoseOtherThreadsAreComputing hung so). The fork waits
// for the section to end instead, and both sides let go after it.
[[maybe_unused]] const bool g_fork_safe =
    pthread_atfork([] { g_mutex.lock(); }, [] { g_mutex.unlock(); }, [] { g_mutex.unlock(); }) == 0;

bool same_file(int fd, dev_t dev, ino_t ino) {
    struct stat st;
    return fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

}  // namespace

ArmedPreadFault::ArmedPreadFault(const PreadFault &fault) {
    struct stat st;
    fstat(fault.fd, &st);
    std::lock_guard<std::mutex> lock(g_mutex);
    g_fault = fault;
    g_dev = st.st_dev;
    g_ino = st.st_ino;
    g_faults = 0;
    g_reads = 0;
    g_armed = true;
}

ArmedPreadFault::~ArmedPreadFault() {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_armed = false;
}

uint64_t ArmedPreadFault::faults() const { return g_faults.load(); }

uint64_t ArmedPreadFault::reads() const { return g_reads.load(); }

}  // namespace memra::tests

using namespace memra::tests;

extern "C" __attribute__((visibility("default"))) ssize_t pread(int fd, void *buf, size_t count, off_t offset) {
    PreadFault fault;
    dev_t dev;
    ino_t ino;
    bool armed;
    {
        // The fault is copied under the lock; no read is ever made under it (it used to make the
        // unarmed read there), because a read may take long and the fork handlers wait for the lock.
        std::lock_guard<std::mutex> lock(g_mutex);
        armed = g_armed;
        fault = g_fault;
        dev = g_dev;
        ino = g_ino;
    }
    if (!armed || !same_file(fd, dev, ino)) return real_pread()(fd, buf, count, offset);
    ++g_reads;
    switch (fault.kind) {
    case PreadFault::Kind::kFailAt:
        if (uint64_t(offset) <= fault.offset && fault.offset < uint64_t(offset) + count) {
            ++g_faults;
            errno = fault.error;
            return -1;
        }
        break;
    case PreadFault::Kind::kShortReads:
        if (count > fault.max_bytes) {
            ++g_faults;
            count = fault.max_bytes;
        }
        break;
    case PreadFault::Kind::kEintrStorm:
        // Three interrupted attempts for every one that goes through.
        if (g_calls++ % 4 != 3) {
            ++g_faults;
            errno = EINTR;
            return -1;
        }
        break;
    case PreadFault::Kind::kSlow:  // a slow disk: the read stays in flight (no lock held)
        ++g_faults;
        usleep(fault.delay_us);
        break;
    case PreadFault::Kind::kChangeMidRead: {
        // One tear at a time: a call's reads run concurrently (its team reads while it computes),
        // and a change rewrites the file and the test's record of the version it holds; `changes`
        // counts tears exactly.
        std::lock_guard<std::mutex> one_tear(g_tear_mutex);
        if (count > 1 && (fault.changes == 0 || g_faults < fault.changes)) {
            const ssize_t got = real_pread()(fd, buf, count / 2, offset);
            if (got > 0) {
                ++g_faults;
                fault.change(fault.context);
            }
            return got;
        }
        break;
    }
    }
    return real_pread()(fd, buf, count, offset);
}

extern "C" __attribute__((visibility("default"))) ssize_t pread64(int fd, void *buf, size_t count, off_t offset) { return pread(fd, buf, count, offset); }
