#include "slab_pool.h"

#include <sys/mman.h>

#include <cerrno>

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

uint8_t *SlabPool::take_free(size_t chunk) {
    auto it = free_by_size_.find(chunk);
    if (it == free_by_size_.end()) return nullptr;
    uint8_t *p = it->second.back();
    it->second.pop_back();
    if (it->second.empty()) free_by_size_.erase(it);
    free_ -= chunk;
    return p;
}

bool SlabPool::has_free(size_t chunk) const { return free_by_size_.count(chunk) != 0; }

uint8_t *SlabPool::adopt_slab(uint8_t *slab, size_t chunk, size_t count) {
    for (size_t i = 0; i < count; ++i) chunks_.emplace(slab + i * chunk, chunk);
    mapped_ += chunk * count;
    for (size_t i = 1; i < count; ++i) give_back(slab + i * chunk, chunk);
    return slab;
}

void SlabPool::give_back(uint8_t *chunk, size_t bytes) {
    free_by_size_[bytes].push_back(chunk);
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
        for (auto it = free_by_size_.begin(); it != free_by_size_.end() && mapped_ > target;) {
            if (pass == 0 && it->first == keep) {
                ++it;
                continue;
            }
            std::vector<uint8_t *> &list = it->second;
            while (!list.empty() && mapped_ > target) {
                unmap_chunk(list.back(), it->first);
                list.pop_back();
            }
            it = list.empty() ? free_by_size_.erase(it) : std::next(it);
        }
}

}  // namespace memra
