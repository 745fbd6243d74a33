#include "compute/scratch.h"

#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#endif
#endif

// Under AddressSanitizer every buffer comes from malloc, so that ASan checks its exact bounds;
// under ThreadSanitizer too, whose shadow memory follows mmap and munmap but not mremap.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MEMRA_MALLOC_ONLY 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define MEMRA_MALLOC_ONLY 1
#endif
#endif

namespace memra {
namespace {

constexpr size_t kPage = 4096;

#ifndef MEMRA_MALLOC_ONLY
// Mapped buffers given back (by threads that exited), kept for the next buffers: memory faulted in
// afresh is slow, above all in a VM (on the development VM a new thread's first call that streamed
// 6 MB took 20 ms in fresh memory against 1 ms in reused), and a storm of short-lived calling
// threads would pay that per thread. Bounded: at most kShelfSlots buffers and kShelfBytes in all;
// what does not fit is unmapped. A taken buffer is resized to the request with mremap, which keeps
// its pages. Lock-free, so that a fork() at any moment leaves the child a usable shelf (at worst a
// buffer some thread of the parent was moving is lost to the child).
constexpr int kShelfSlots = 16;
constexpr size_t kShelfBytes = size_t{64} << 20;

std::atomic<uint8_t *> g_shelf[kShelfSlots];
std::atomic<size_t> g_shelf_bytes{0};

// The size of a shelved buffer is kept in its first bytes (its contents are nobody's).
size_t shelved_size(const uint8_t *p) {
    size_t size;
    std::memcpy(&size, p, sizeof size);
    return size;
}

void shelve(uint8_t *p, size_t size) {
    if (g_shelf_bytes.fetch_add(size, std::memory_order_relaxed) + size <= kShelfBytes) {
        std::memcpy(p, &size, sizeof size);
        for (std::atomic<uint8_t *> &slot : g_shelf) {
            uint8_t *empty = nullptr;
            if (slot.compare_exchange_strong(empty, p, std::memory_order_release, std::memory_order_relaxed)) return;
        }
    }
    g_shelf_bytes.fetch_sub(size, std::memory_order_relaxed);
    ::munmap(p, size);
}

// A shelved buffer resized to `size` bytes, or nullptr: the smallest that holds `size`, else the
// largest (resizing keeps the pages both have: a good fit faults in or gives back the least).
uint8_t *unshelve(size_t size) {
    for (int attempt = 0; attempt < 3; ++attempt) {
        int best = -1;
        size_t best_size = 0;
        for (int i = 0; i < kShelfSlots; ++i) {
            const uint8_t *p = g_shelf[i].load(std::memory_order_acquire);
            if (!p) continue;
            const size_t had = shelved_size(p);
            const bool better = best < 0 || (had >= size ? best_size < size || had < best_size : best_size < had);
            if (better) {
                best = i;
                best_size = had;
            }
        }
        if (best < 0) return nullptr;
        uint8_t *p = g_shelf[best].exchange(nullptr, std::memory_order_acquire);
        if (!p) continue;  // taken meanwhile by another thread: look again
        const size_t had = shelved_size(p);
        g_shelf_bytes.fetch_sub(had, std::memory_order_relaxed);
        void *q = had == size ? p : ::mremap(p, had, size, MREMAP_MAYMOVE);
        if (q != MAP_FAILED) return static_cast<uint8_t *>(q);
        ::munmap(p, had);
        return nullptr;
    }
    return nullptr;
}
#endif

}  // namespace

void AlignedBuffer::grow(size_t bytes) {
    if (bytes > SIZE_MAX - kPage) throw std::bad_alloc();
#ifndef MEMRA_MALLOC_ONLY
    if (bytes >= kMapBytes) {
        const size_t size = (bytes + kPage - 1) & ~(kPage - 1);
        // A mapped buffer grows in place or moves with its pages (only the new part is faulted
        // in); else a shelved one is taken, else the memory is mapped and faulted in at once
        // (MAP_POPULATE: the call is about to write all of it).
        void *p = mapped_ ? ::mremap(data_, capacity_, size, MREMAP_MAYMOVE) : MAP_FAILED;
        if (p == MAP_FAILED) {
            release();
            p = unshelve(size);
            if (!p) p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        }
        if (p == MAP_FAILED) throw std::bad_alloc();
#ifdef VALGRIND_MAKE_MEM_UNDEFINED
        VALGRIND_MAKE_MEM_UNDEFINED(p, size);  // as malloc'd memory is: memcheck reports reads before writes
#endif
        data_ = static_cast<uint8_t *>(p);
        capacity_ = size;
        mapped_ = true;
        return;
    }
#endif
    release();  // the contents need not survive: give the old memory back first
    const size_t size = (bytes + 63) & ~size_t{63};
    void *p = std::aligned_alloc(64, size);
    if (!p) throw std::bad_alloc();
    data_ = static_cast<uint8_t *>(p);
    capacity_ = size;
    mapped_ = false;
}

void AlignedBuffer::release() noexcept {
#ifndef MEMRA_MALLOC_ONLY
    if (mapped_) shelve(data_, capacity_);
#endif
    if (!mapped_) std::free(data_);
    data_ = nullptr;
    capacity_ = 0;
    mapped_ = false;
}

AlignedBuffer &thread_scratch() {
    thread_local AlignedBuffer buffer;
    return buffer;
}

}  // namespace memra
