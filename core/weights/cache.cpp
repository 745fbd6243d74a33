#include "weights/cache.h"

#include <dlfcn.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <new>
#include <thread>
#include <vector>

#include "signals_blocked.h"

namespace memra {

struct WeightCache::Entry {
    enum class State { kLoading, kReady, kFailed };
    CacheKey key;
    uint8_t *data = nullptr;
    size_t chunk = 0;
    State state = State::kLoading;
    int pins = 0;
    bool on_lru = false;
    Entry *lru_prev = nullptr, *lru_next = nullptr;
    std::vector<std::pair<int32_t, uint64_t>> on_node;  // (node, bytes) placed, placed()
};

size_t CacheKeyHash::operator()(const CacheKey &k) const {
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (uint64_t v : {k.file.dev, k.file.ino, k.file.size, uint64_t(k.file.mtime_ns), k.offset, k.length, uint64_t(k.layout)})
        h = (h ^ v) * 0x100000001b3ull + (h >> 29);
    return static_cast<size_t>(h);
}

WeightCache::WeightCache(uint64_t budget, Stats &stats, SlabPool::MapFn map, bool prefault)
    : budget_(budget), stats_(stats), pool_(map), prefault_(prefault) {}

WeightCache::~WeightCache() {
    for (auto &[key, entry] : entries_) {
        if (entry->state == Entry::State::kReady) count_resident(entry, false);
        delete entry;
    }
    for (size_t i = 0; i < spare_count_; ++i) ::munmap(spares_[i].data, spares_[i].bytes);
}

namespace {

// A detached thread may run library code after a dlclose: the library stays loaded once it starts
// one (marked once: the loader's lock is not taken again for every thread).
void keep_library_loaded() {
    static std::atomic<bool> kept{false};
    if (kept.exchange(true)) return;
    Dl_info info;
    if (::dladdr(reinterpret_cast<void *>(&keep_library_loaded), &info) && info.dli_fname)
        (void)::dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

}  // namespace

void WeightCache::before_fork() { mutex_.lock(); }

void WeightCache::after_fork_in_parent() { mutex_.unlock(); }

void WeightCache::after_fork_in_child() {
    mutex_.unlock();  // taken by before_fork, in this very thread
    new (&filled_) std::condition_variable;
    reserved_ = 0;  // memory being mapped by threads that are gone
    prefaulting_ = false;  // the thread making spares is one of them
    for (auto it = entries_.begin(); it != entries_.end();) {
        Entry *e = it->second;
        if (e->state == Entry::State::kLoading) {
            it = entries_.erase(it);
            release(e);
            continue;
        }
        if (e->pins > 0) {
            e->pins = 0;
            lru_push_back(e);
        }
        ++it;
    }
}

WeightCache::Handle WeightCache::acquire(const CacheKey &key, bool claim) {
    if (budget_ == 0) return {};
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        auto it = entries_.find(key);
        if (it != entries_.end()) {
            Entry *e = it->second;
            if (e->pins++ == 0 && e->on_lru) lru_remove(e);
            return {e->state == Entry::State::kReady ? Outcome::kReady : Outcome::kInFlight, e, e->data};
        }
        if (!claim) return {};
        StopWatch insert;
        const size_t chunk = SlabPool::chunk_bytes(key.length);
        if (chunk > budget_) return {};
        uint8_t *data = chunk_for(chunk, lock);
        insert.lap_into(stats_.insert_ns);
        if (!data) return {};
        // chunk_for may have let go of the lock to map memory: another reader may have claimed
        // the same key meanwhile, and then the chunk is kept for later and that entry is used.
        if (entries_.count(key)) {
            pool_.give_back(data, chunk);
            continue;
        }
        Entry *e = nullptr;
        try {
            e = new Entry;
            e->key = key;
            e->data = data;
            e->chunk = chunk;
            e->pins = 1;
            entries_.emplace(key, e);
        } catch (const std::bad_alloc &) {
            // No memory for the entry's bookkeeping: not cached, like a chunk that was refused.
            delete e;
            pool_.give_back(data, chunk);
            return {};
        }
        return {Outcome::kClaimed, e, data};
    }
}

uint8_t *WeightCache::chunk_for(size_t chunk, std::unique_lock<std::mutex> &lock) {
    for (;;) {
        if (uint8_t *p = pool_.take_free(chunk)) return p;
        const uint64_t used = pool_.mapped_bytes() + reserved_ + spare_bytes_;
        if (used + chunk <= budget_) break;
        // Make room: spare slabs and free chunks of other sizes first (they hold nothing), then
        // the least recently used entry (whose chunk, if of this size, the next round takes).
        if (drop_spare_locked()) continue;
        if (pool_.free_bytes() > 0) {
            pool_.unmap_free(budget_ >= reserved_ + chunk ? budget_ - reserved_ - chunk : 0, chunk);
            if (pool_.mapped_bytes() + reserved_ + chunk <= budget_) break;
        }
        if (!lru_head_) return nullptr;  // everything left is pinned or being mapped
        evict_one();
    }
    // A spare slab, faulted in ahead of demand, when one can hold a chunk of this size (spares
    // too small for it hold nothing and make way). Its tail beyond the last whole chunk goes.
    while (spare_count_ > 0 && spares_[spare_count_ - 1].bytes < chunk) drop_spare_locked();
    if (spare_count_ > 0) {
        const Spare spare = spares_[--spare_count_];
        spare_bytes_ -= spare.bytes;
        const size_t count = spare.bytes / chunk;
        if (spare.bytes > count * chunk) ::munmap(spare.data + count * chunk, spare.bytes - count * chunk);
        uint8_t *first = pool_.adopt_slab(spare.data, chunk, count);
        want_spares_locked();
        return first;
    }
    // Grow by a slab of several chunks of this size (faulting memory in bulk is much faster than
    // page by page), as far as the budget allows.
    const uint64_t room = budget_ - pool_.mapped_bytes() - reserved_ - spare_bytes_;
    const size_t count = std::max<size_t>(1, std::min<uint64_t>(SlabPool::kSlabBytes / chunk, room / chunk));
    reserved_ += count * chunk;
    lock.unlock();
    uint8_t *slab = pool_.map_slab(chunk, count);
    lock.lock();
    reserved_ -= count * chunk;
    if (!slab) return nullptr;
    uint8_t *first = pool_.adopt_slab(slab, chunk, count);
    want_spares_locked();  // the cache is growing: the next growth will want memory too
    return first;
}

bool WeightCache::drop_spare_locked() {
    if (spare_count_ == 0) return false;
    const Spare spare = spares_[--spare_count_];
    spare_bytes_ -= spare.bytes;
    ::munmap(spare.data, spare.bytes);
    return true;
}

void WeightCache::want_spares_locked() {
    if (!prefault_ || prefaulting_ || spare_count_ >= kSpareSlabs) return;
    if (pool_.mapped_bytes() + reserved_ + spare_bytes_ + SlabPool::kSlabBytes > budget_) return;
    prefaulting_ = true;
    keep_library_loaded();
    AllSignalsBlocked blocked;  // the thread takes none of the process's signals
    try {
        std::thread([this] { make_spares(); }).detach();
    } catch (...) {
        prefaulting_ = false;  // no thread to be had: the cache grows on demand, as before
    }
}

void WeightCache::make_spares() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (prefaulting_ && spare_count_ < kSpareSlabs &&
           pool_.mapped_bytes() + reserved_ + spare_bytes_ + SlabPool::kSlabBytes <= budget_) {
        reserved_ += SlabPool::kSlabBytes;
        lock.unlock();
        uint8_t *slab = pool_.map_spare(SlabPool::kSlabBytes);
        lock.lock();
        reserved_ -= SlabPool::kSlabBytes;
        if (!slab) break;  // refused: the cache grows on demand, as before
        spares_[spare_count_++] = {slab, SlabPool::kSlabBytes};
        spare_bytes_ += SlabPool::kSlabBytes;
    }
    prefaulting_ = false;
}

void WeightCache::lru_push_back(Entry *e) {
    e->lru_prev = lru_tail_;
    e->lru_next = nullptr;
    (lru_tail_ ? lru_tail_->lru_next : lru_head_) = e;
    lru_tail_ = e;
    e->on_lru = true;
}

void WeightCache::lru_remove(Entry *e) {
    (e->lru_prev ? e->lru_prev->lru_next : lru_head_) = e->lru_next;
    (e->lru_next ? e->lru_next->lru_prev : lru_tail_) = e->lru_prev;
    e->lru_prev = e->lru_next = nullptr;
    e->on_lru = false;
}

void WeightCache::evict_one() {
    Entry *e = lru_head_;
    lru_remove(e);
    entries_.erase(e->key);
    count_resident(e, false);
    release(e);
}

void WeightCache::release(Entry *e) {
    pool_.give_back(e->data, e->chunk);
    delete e;
}

bool WeightCache::contains(const CacheKey &key) {
    if (budget_ == 0) return false;
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_.count(key) != 0;
}

void WeightCache::count_resident(const Entry *e, bool in) {
    auto add = [in](std::atomic<uint64_t> &counter, uint64_t bytes) {
        if (in)
            counter.fetch_add(bytes, std::memory_order_relaxed);
        else
            counter.fetch_sub(bytes, std::memory_order_relaxed);
    };
    add(stats_.resident_bytes, e->key.length);
    for (const auto &[node, bytes] : e->on_node) add(stats_.resident_on_node[node], bytes);
}

void WeightCache::placed(Entry *e, const uint64_t *bytes_on_node) {
    // Only the claimer touches a Loading entry's fields: no lock. Without memory for the record
    // the placement stays (only the per-node count misses it).
    e->on_node.clear();
    try {
        for (int32_t node = 0; node < kMaxPlacedNodes; ++node)
            if (bytes_on_node[node]) e->on_node.emplace_back(node, bytes_on_node[node]);
    } catch (const std::bad_alloc &) {
        e->on_node.clear();
    }
}

void WeightCache::publish(Entry *e) {
    StopWatch insert;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        e->state = Entry::State::kReady;
        count_resident(e, true);
    }
    filled_.notify_all();
    insert.lap_into(stats_.insert_ns);
}

void WeightCache::abandon(Entry *e) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        entries_.erase(e->key);
        e->state = Entry::State::kFailed;
        if (--e->pins == 0) release(e);
    }
    filled_.notify_all();
}

bool WeightCache::wait(Entry *e, uint8_t **data) {
    std::unique_lock<std::mutex> lock(mutex_);
    filled_.wait(lock, [e] { return e->state != Entry::State::kLoading; });
    if (e->state == Entry::State::kReady) {
        *data = e->data;
        return true;
    }
    if (--e->pins == 0) release(e);
    return false;
}

void WeightCache::unpin(Entry *e) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--e->pins > 0) return;
    if (e->state == Entry::State::kFailed) {
        release(e);
        return;
    }
    lru_push_back(e);
}

size_t WeightCache::mapped_bytes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return pool_.mapped_bytes() + spare_bytes_;
}

size_t WeightCache::spare_bytes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return spare_bytes_;
}

bool WeightCache::prefaulting() {
    std::lock_guard<std::mutex> lock(mutex_);
    return prefaulting_;
}

}  // namespace memra
