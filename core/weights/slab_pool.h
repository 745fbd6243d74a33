// Memory for cached weights. Fresh anonymous memory is slow to touch the first time (a page
// fault per page), so a cache that mapped a new buffer per miss could never read at the speed of
// pread. The pool maps memory in large slabs, faults them in at once (MADV_POPULATE_WRITE),
// carves them into page-aligned chunks (aligned for any SIMD load), and recycles freed chunks by
// exact size: a model has only a few distinct projection sizes, so in steady state every miss
// reuses an evicted chunk and no page is faulted again.
// Not thread-safe: the weight cache calls it under its lock (except map_slab, which it calls
// unlocked on memory it has reserved).
// Giving a chunk back never allocates (the free lists run through the free chunks themselves, and
// a size's list exists from its first slab on), so the cache can release entries on paths that
// must not fail: a call's clean-up, also when memory is short.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <unordered_map>

namespace memra {

class SlabPool {
public:
    // Maps `bytes` (a multiple of the page size) of read-write memory, faulted in; nullptr when
    // the system refuses. Replaceable so that tests can refuse growth.
    using MapFn = uint8_t *(*)(size_t bytes);
    static uint8_t *map_prefaulted(size_t bytes);

    static constexpr size_t kPageBytes = 4096;
    static constexpr size_t kSlabBytes = size_t{32} << 20;  // one growth maps about this much

    explicit SlabPool(MapFn map = map_prefaulted) : map_(map) {}
    SlabPool(const SlabPool &) = delete;
    SlabPool &operator=(const SlabPool &) = delete;
    ~SlabPool();

    // The chunk size that holds `bytes` (page-aligned, hence aligned for any SIMD load).
    static size_t chunk_bytes(size_t bytes) { return (bytes + kPageBytes - 1) & ~(kPageBytes - 1); }

    // A free chunk of exactly `chunk` bytes, or nullptr.
    uint8_t *take_free(size_t chunk);
    bool has_free(size_t chunk) const;

    // Maps `count` chunks of `chunk` bytes in one slab (unlocked: the caller has reserved the
    // bytes); nullptr when mapping failed. adopt_slab then returns the first chunk to the caller
    // and files the others as free; without memory for that bookkeeping it unmaps the slab and
    // returns nullptr.
    uint8_t *map_slab(size_t chunk, size_t count) const { return map_(chunk * count); }
    uint8_t *adopt_slab(uint8_t *slab, size_t chunk, size_t count);
    // Maps `bytes` (a multiple of the page size) through the pool's MapFn, faulted in, unlocked:
    // a spare slab the cache carves later (adopt_slab); nullptr when refused.
    uint8_t *map_spare(size_t bytes) const { return map_(bytes); }

    // A chunk the caller no longer needs (taken from this pool) becomes free for reuse.
    void give_back(uint8_t *chunk, size_t bytes) noexcept;

    // Unmaps free chunks, other sizes than `keep` first, until mapped_bytes() <= target.
    void unmap_free(size_t target, size_t keep);

    size_t mapped_bytes() const { return mapped_; }
    size_t free_bytes() const { return free_; }

private:
    void unmap_chunk(uint8_t *chunk, size_t bytes);

    // Free chunks of one size: a list linked through each chunk's first bytes.
    struct FreeList {
        uint8_t *head = nullptr;
    };

    MapFn map_;
    std::map<size_t, FreeList> free_by_size_;  // a size's entry stays once made
    std::unordered_map<uint8_t *, size_t> chunks_;  // every mapped chunk, free or in use
    size_t mapped_ = 0, free_ = 0;
};

}  // namespace memra
