#include "new_shim.h"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <thread>

namespace memra::tests {
namespace {

thread_local uint64_t t_countdown = 0;  // 0: off; else the allocation that fails, counting down
std::atomic<bool> g_others{false};
std::atomic<std::thread::id> g_arming_thread{};
std::atomic<uint64_t> g_faults{0};

bool refuse() {
    if (t_countdown > 0 && --t_countdown == 0) {
        ++g_faults;
        return true;
    }
    if (g_others.load(std::memory_order_relaxed) && std::this_thread::get_id() != g_arming_thread.load()) {
        ++g_faults;
        return true;
    }
    return false;
}

void *allocate(std::size_t size, std::size_t align) {
    if (refuse()) return nullptr;
    if (size == 0) size = 1;
    if (align <= alignof(std::max_align_t)) return std::malloc(size);
    return std::aligned_alloc(align, (size + align - 1) / align * align);
}

}  // namespace

ArmedNewFault ArmedNewFault::nth_on_this_thread(uint64_t n) {
    g_faults = 0;
    t_countdown = n;
    return ArmedNewFault();
}

ArmedNewFault ArmedNewFault::every_on_other_threads() {
    g_faults = 0;
    g_arming_thread = std::this_thread::get_id();
    g_others = true;
    return ArmedNewFault();
}

ArmedNewFault::ArmedNewFault(ArmedNewFault &&other) noexcept { other.armed_ = false; }

ArmedNewFault::~ArmedNewFault() {
    if (!armed_) return;
    t_countdown = 0;
    g_others = false;
}

uint64_t ArmedNewFault::faults() const { return g_faults.load(); }

}  // namespace memra::tests

using memra::tests::allocate;

void *operator new(std::size_t size) {
    if (void *p = allocate(size, 0)) return p;
    throw std::bad_alloc();
}
void *operator new[](std::size_t size) { return operator new(size); }
void *operator new(std::size_t size, const std::nothrow_t &) noexcept { return allocate(size, 0); }
void *operator new[](std::size_t size, const std::nothrow_t &) noexcept { return allocate(size, 0); }
void *operator new(std::size_t size, std::align_val_t align) {
    if (void *p = allocate(size, std::size_t(align))) return p;
    throw std::bad_alloc();
}
void *operator new[](std::size_t size, std::align_val_t align) { return operator new(size, align); }
void *operator new(std::size_t size, std::align_val_t align, const std::nothrow_t &) noexcept {
    return allocate(size, std::size_t(align));
}
void *operator new[](std::size_t size, std::align_val_t align, const std::nothrow_t &) noexcept {
    return allocate(size, std::size_t(align));
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t) noexcept { std::free(p); }
void operator delete(void *p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void *p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void *p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete[](void *p, const std::nothrow_t &) noexcept { std::free(p); }
