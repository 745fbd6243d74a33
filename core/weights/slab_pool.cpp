#include "weights/slab_pool.h"

#include <stdlib.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <new>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels answer EINVAL and pages are touched
#endif

namespace memra {

namespace {

constexpr size_t kHugePageBytes = size_t{2} << 20;

// `bytes` of anonymous memory whose start is aligned to a huge page when `bytes` spans one or more
// (so that transparent huge pages can back it); nullptr when refused.
uint8_t *map_aligned(size_t bytes) {
    const int prot = PROT_READ | PROT_WRITE, flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
    if (bytes < kHugePageBytes) {
        void *raw = ::mmap(nullptr, bytes, prot, flags, -1, 0);
        return raw == MAP_FAILED ? nullptr : static_cast<uint8_t *>(raw);
    }
    const size_t padded = bytes + kHugePageBytes - SlabPool::kPageBytes;
    void *raw = ::mmap(nullptr, padded, prot, flags, -1, 0);
    if (raw == MAP_FAILED) return nullptr;
    uint8_t *base = static_cast<uint8_t *>(raw);
    uint8_t *start = reinterpret_cast<uint8_t *>((reinterpret_cast<uintptr_t>(base) + kHugePageBytes - 1) &
                                                 ~uintptr_t{kHugePageBytes - 1});
    if (start > base) ::munmap(base, size_t(start - base));
    if (base + padded > start + bytes) ::munmap(start + bytes, size_t(base + padded - (start + bytes)));
    return start;
}

// Measurement only: MEMRA_TEST_SLAB_HUGEPAGES=0 keeps the slabs on 4 KiB pages (MADV_NOHUGEPAGE),
// so that one build can be measured both ways (memra-bench, docs/file-weights.md, "Memory").
// Read once; not in a secure-execution process.
bool slab_hugepages() {
    static const bool on = [] {
        const char *v = ::secure_getenv("MEMRA_TEST_SLAB_HUGEPAGES");
        return !(v && std::strcmp(v, "0") == 0);
    }();
    return on;
}

}  // namespace

uint8_t *SlabPool::map_prefaulted(size_t bytes) {
    // Transparent huge pages where the kernel has them (MADV_HUGEPAGE; a no-op when THP is off).
    // Measured on the development VM (docs/file-weights.md, "Memory"): faulting a slab in and
    // pread-ing into it ran at 2.3-5.4 GB/s on huge pages against 0.42-0.55 GB/s on 4 KiB pages,
    // whose first writes after MADV_POPULATE_WRITE still fault in the hypervisor; warm kernels
    // also walk fewer TLB entries, as on the memory path. Chunks stay page-aligned: unmapping one
    // (part of a slab) splits a huge page, which the kernel handles.
    uint8_t *slab = map_aligned(bytes);
    if (!slab) return nullptr;
    if (bytes >= kHugePageBytes) (void)::madvise(slab, bytes, slab_hugepages() ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    if (::madvise(slab, bytes, MADV_POPULATE_WRITE) != 0) {
        if (errno != EINVAL) {  // ENOMEM and the like: the memory is not there
            ::munmap(slab, bytes);
            return nullptr;
        }
        for (size_t i = 0; i < bytes; i += kPageBytes) static_cast<volatile uint8_t *>(slab)[i] = 0;
    }
    return slab;
}

SlabPool::~SlabPool() {
    for (const auto &[chunk, bytes] : chunks_) ::munmap(chunk, bytes);
}

namespace {

uint8_t *next_free(const uint8_t *chunk) {
    uint8_t *next;
    std::memcpy(&next, chunk, sizeof next);
    return next;
}

}  // namespace

uint8_t *SlabPool::take_free(size_t chunk) {
    auto it = free_by_size_.find(chunk);
    if (it == free_by_size_.end() || !it->second.head) return nullptr;
    uint8_t *p = it->second.head;
    it->second.head = next_free(p);
    free_ -= chunk;
    return p;
}

bool SlabPool::has_free(size_t chunk) const {
    auto it = free_by_size_.find(chunk);
    return it != free_by_size_.end() && it->second.head;
}

uint8_t *SlabPool::adopt_slab(uint8_t *slab, size_t chunk, size_t count) {
    size_t recorded = 0;
    try {
        free_by_size_[chunk];  // the size's list, before any chunk of it can be given back
        for (; recorded < count; ++recorded) chunks_.emplace(slab + recorded * chunk, chunk);
    } catch (const std::bad_alloc &) {
        for (size_t i = 0; i < recorded; ++i) chunks_.erase(slab + i * chunk);
        ::munmap(slab, chunk * count);
        return nullptr;
    }
    mapped_ += chunk * count;
    for (size_t i = 1; i < count; ++i) give_back(slab + i * chunk, chunk);
    return slab;
}

void SlabPool::give_back(uint8_t *chunk, size_t bytes) noexcept {
    FreeList &list = free_by_size_.find(bytes)->second;  // made by adopt_slab
    std::memcpy(chunk, &list.head, sizeof list.head);
    list.head = chunk;
    free_ += bytes;
}

void SlabPool::unmap_chunk(uint8_t *chunk, size_t bytes) {
    ::munmap(chunk, bytes);  // page-aligned, so part of a slab can go on its own
    chunks_.erase(chunk);
    mapped_ -= bytes;
    free_ -= bytes;
}

void SlabPool::unmap_free(size_t target, size_t keep) {
    for (int pass = 0; pass < 2 && mapped_ > target; ++pass)
        for (auto &[bytes, list] : free_by_size_) {
            if (mapped_ <= target) break;
            if (pass == 0 && bytes == keep) continue;
            while (list.head && mapped_ > target) {
                uint8_t *chunk = list.head;
                list.head = next_free(chunk);
                unmap_chunk(chunk, bytes);
            }
        }
}

}  // namespace memra
