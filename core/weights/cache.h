// The weight cache: bytes of file-backed projections kept in memory under a byte budget, keyed
// by what the bytes are (the file's identity, offset, length), never by the fd number.
//
// An entry is Loading while one reader (a compute call or the prefetch worker) fills it, then
// Ready. Whoever holds a pin may use the bytes: a pinned entry is never evicted or reused.
// Unpinned Ready entries sit on an LRU list; eviction takes the least recently released. Memory
// comes from a SlabPool whose mapped bytes (entries plus free chunks kept for reuse) stay within
// the budget; a projection that cannot get memory without evicting a pinned entry is not cached
// (the caller streams it).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "weights/io.h"
#include "weights/slab_pool.h"
#include "stats.h"

namespace memra {

// `layout`: the arrangement of the bytes (memra/backend.h): MEMRA_LAYOUT_GGML for the file's own
// bytes, a plugin's layout id for the same bytes repacked for its kernels, so both can be cached
// side by side and a repacked entry is repacked once.
struct CacheKey {
    FileIdentity file;
    uint64_t offset = 0;
    uint64_t length = 0;
    uint32_t layout = 0;  // MEMRA_LAYOUT_GGML
    bool operator==(const CacheKey &o) const {
        return file == o.file && offset == o.offset && length == o.length && layout == o.layout;
    }
};

struct CacheKeyHash {
    size_t operator()(const CacheKey &k) const;
};

class WeightCache {
public:
    struct Entry;

    enum class Outcome {
        kReady,     // pinned; the bytes are there
        kInFlight,  // pinned; another reader is filling it: wait() before use
        kClaimed,   // pinned; the caller must read into data and then publish() or abandon()
        kUncached,  // nothing pinned: no memory for it within the budget (or caching is off)
    };
    struct Handle {
        Outcome outcome = Outcome::kUncached;
        Entry *entry = nullptr;
        uint8_t *data = nullptr;
    };

    // `stats` receives resident_bytes and insert_ns.
    // `prefault`: grow ahead of demand (below). The library's cache does (library.h, which also
    // registers the fork handlers below); caches made by tests do not, unless they ask.
    WeightCache(uint64_t budget, Stats &stats, SlabPool::MapFn map = SlabPool::map_prefaulted, bool prefault = false);
    WeightCache(const WeightCache &) = delete;
    WeightCache &operator=(const WeightCache &) = delete;
    ~WeightCache();  // no call may still hold a pin

    // Finds the entry for `key` or, when `claim`, claims a new one (evicting and mapping as
    // needed); without `claim` a missing entry is kUncached.
    Handle acquire(const CacheKey &key, bool claim = true);
    // Resident or being read (the prefetch queue's "already there" test; takes no pin).
    bool contains(const CacheKey &key);

    // The claimed entry's pages were placed (numa/placement.h): `bytes_on_node` (kMaxPlacedNodes
    // counts) joins Stats::resident_on_node while the entry is resident. Before publish().
    void placed(Entry *entry, const uint64_t *bytes_on_node);
    // The claimed entry's bytes are complete: it becomes Ready and waiters wake.
    void publish(Entry *entry);
    // The claimed entry could not be read: it is dropped (and unpinned), waiters wake.
    void abandon(Entry *entry);
    // For an in-flight entry: true once it is Ready (the pin still held), false when its reader
    // abandoned it (the pin is then gone; acquire again to read it yourself).
    bool wait(Entry *entry, uint8_t **data);
    void unpin(Entry *entry);

    uint64_t budget() const { return budget_; }
    size_t mapped_bytes();  // entries plus free chunks and spare slabs
    // Spare slabs mapped and faulted in ahead of demand (bytes), and whether a thread is mapping
    // more now: for tests.
    size_t spare_bytes();
    bool prefaulting();

    // fork(), through pthread_atfork: the lock is taken before and let go after, so the child's
    // copy of the cache is consistent. The child has only the thread that forked, which was not
    // inside the library: every pin and every read in flight belonged to a thread it does not
    // have. So in the child the entries being read are dropped (a call there reads them itself
    // instead of waiting for a reader that is gone), the pinned ones are unpinned, and the
    // condition variable (whose waiters are gone) is made anew.
    void before_fork();
    void after_fork_in_parent();
    void after_fork_in_child();

private:
    // With the lock held: a chunk for `length` bytes within the budget, or nullptr.
    uint8_t *chunk_for(size_t length, std::unique_lock<std::mutex> &lock);
    void evict_one();
    // Growing ahead of demand: once the cache has grown, a background thread maps and faults in
    // up to kSpareSlabs slabs of kSlabBytes (within the budget: counted in reserved_ while being
    // mapped, in spare_bytes_ after), so that the next growth finds its memory faulted already
    // (fresh memory faults slowly, above all in a VM). Spares hold nothing: they are unmapped
    // first when room must be made.
    static constexpr size_t kSpareSlabs = 2;
    void want_spares_locked();
    void make_spares();  // the background thread
    bool drop_spare_locked();  // unmaps one spare; false when there is none
    void release(Entry *entry);  // lock held, pins == 0, entry out of the map
    void count_resident(const Entry *entry, bool in);  // a Ready entry arrives or leaves
    // The LRU list is intrusive (links in the entries): unpinning never allocates, so a call's
    // clean-up cannot fail, even out of memory.
    void lru_push_back(Entry *entry);
    void lru_remove(Entry *entry);

    const uint64_t budget_;
    Stats &stats_;
    std::mutex mutex_;
    std::condition_variable filled_;  // some entry left the Loading state
    SlabPool pool_;
    uint64_t reserved_ = 0;  // bytes being mapped outside the lock, counted against the budget
    const bool prefault_;
    bool prefaulting_ = false;  // a thread is making spares
    struct Spare {
        uint8_t *data;
        size_t bytes;
    };
    Spare spares_[kSpareSlabs] = {};
    size_t spare_count_ = 0, spare_bytes_ = 0;
    std::unordered_map<CacheKey, Entry *, CacheKeyHash> entries_;
    Entry *lru_head_ = nullptr, *lru_tail_ = nullptr;  // unpinned Ready entries, least recently used first
};

}  // namespace memra
