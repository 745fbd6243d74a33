#include "slab_pool.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <new>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels answer EINVAL and pages are touched
#endif

namespace memra {

uint8_t *SlabPool::map_prefaulted(size_t bytes) {
    // Small pages on purpose: on the development VM, faulting in transparent huge pages
    // (MADV_HUGEPAGE, with the kernel's default defrag=madvise) ran at 0.1-0.4 GB/s against
    // 0.6-1.6 GB/s for 4 KiB pages, and pread into either ran at the same speed (docs/file-weights.md).
    void *raw = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) return nullptr;
    uint8_t *slab = static_cast<uint8_t *>(raw);
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
