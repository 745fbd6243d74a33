// The weight cache on its own (core/weights/cache.h, a WeightCache built with its own budget and
// counters): LRU order, pins, the budget, one read for concurrent misses, refused growth, chunk
// reuse; a call that cannot stream what it cannot cache (core/weights/weight_source.h); and the budget
// variable's syntax (core/dispatch/settings.h).
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "weights/cache.h"
#include "error.h"
#include "dispatch/settings.h"
#include "weights/weight_source.h"

namespace memra {
namespace {

constexpr size_t kChunk = 4 * SlabPool::kPageBytes;

CacheKey key(uint64_t n, uint64_t length = kChunk) {
    CacheKey k;
    k.file.dev = 1;
    k.file.ino = 42;
    k.offset = n * 1000003;
    k.length = length;
    return k;
}

// Claims `k`, fills it with its number, publishes and unpins: one cached, unused entry.
void put(WeightCache &cache, uint64_t n, uint64_t length = kChunk) {
    WeightCache::Handle h = cache.acquire(key(n, length));
    ASSERT_EQ(h.outcome, WeightCache::Outcome::kClaimed) << "entry " << n;
    std::memset(h.data, int(n), length);
    cache.publish(h.entry);
    cache.unpin(h.entry);
}

// Whether `n` is resident: a look-up that does not change the LRU order more than a use would.
bool resident(WeightCache &cache, uint64_t n) { return cache.contains(key(n)); }

TEST(WeightCache, EvictsTheLeastRecentlyUsed) {
    Stats stats;
    WeightCache cache(3 * kChunk, stats);
    put(cache, 1);
    put(cache, 2);
    put(cache, 3);
    WeightCache::Handle used = cache.acquire(key(1));  // 1 becomes the most recently used
    ASSERT_EQ(used.outcome, WeightCache::Outcome::kReady);
    EXPECT_EQ(used.data[0], 1);
    cache.unpin(used.entry);
    put(cache, 4);  // evicts 2
    EXPECT_TRUE(resident(cache, 1));
    EXPECT_FALSE(resident(cache, 2));
    EXPECT_TRUE(resident(cache, 3));
    EXPECT_TRUE(resident(cache, 4));
    EXPECT_EQ(stats.resident_bytes.load(), 3 * kChunk);
    EXPECT_LE(cache.mapped_bytes(), 3 * kChunk);
}

// Growing ahead of demand (WeightCache's spares): once the cache has grown, a background thread
// maps and faults in spare slabs, which the next growth carves instead of mapping on the call's
// path. The budget holds at every step (spares count), spares make way for entries, and a chunk
// larger than a spare still gets memory.
std::atomic<int> g_spare_maps{0};
uint8_t *counting_spare_map(size_t bytes) {
    g_spare_maps.fetch_add(1);
    return SlabPool::map_prefaulted(bytes);
}

void settle(WeightCache &cache) {
    for (int i = 0; i < 5000 && cache.prefaulting(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_FALSE(cache.prefaulting());
}

TEST(WeightCache, GrowsAheadOfDemandWithinTheBudget) {
    constexpr size_t kMiB = size_t{1} << 20, kSlab = SlabPool::kSlabBytes;
    const uint64_t budget = 3 * kSlab + kMiB;
    Stats stats;
    WeightCache cache(budget, stats, counting_spare_map, /*prefault=*/true);
    g_spare_maps = 0;
    put(cache, 0, kMiB);  // the first growth: one slab, mapped by the call
    settle(cache);
    EXPECT_EQ(cache.spare_bytes(), 2 * kSlab) << "two spares made in the background";
    EXPECT_EQ(g_spare_maps.load(), 3);
    EXPECT_LE(cache.mapped_bytes(), budget);
    // Fill the budget: growth carves the spares (no mapping on the call's path for them), then
    // the rest of the room; the budget holds throughout.
    uint64_t n = 1;
    for (; n < 200; ++n) {
        WeightCache::Handle h = cache.acquire(key(n, kMiB));
        if (h.outcome != WeightCache::Outcome::kClaimed) break;
        std::memset(h.data, int(n), kMiB);
        cache.publish(h.entry);
        cache.unpin(h.entry);
        EXPECT_LE(cache.mapped_bytes() , budget) << "entry " << n;
    }
    settle(cache);
    EXPECT_LE(cache.mapped_bytes(), budget);
    EXPECT_EQ(cache.spare_bytes(), 0u) << "no room is left for spares";
    EXPECT_GE(stats.resident_bytes.load(), 3 * kSlab) << "the spares became entries";
    // Everything still holds its own bytes (an entry evicted for room is simply gone).
    for (uint64_t i = 0; i < n; ++i) {
        WeightCache::Handle h = cache.acquire(key(i, kMiB), false);
        if (h.outcome != WeightCache::Outcome::kReady) continue;
        EXPECT_EQ(h.data[0], uint8_t(i));
        EXPECT_EQ(h.data[kMiB - 1], uint8_t(i));
        cache.unpin(h.entry);
    }
}

TEST(WeightCache, SparesMakeWayForEntriesOfAnySize) {
    constexpr size_t kMiB = size_t{1} << 20, kSlab = SlabPool::kSlabBytes;
    const uint64_t budget = 4 * kSlab;
    Stats stats;
    WeightCache cache(budget, stats, SlabPool::map_prefaulted, /*prefault=*/true);
    put(cache, 0, kMiB);
    settle(cache);
    ASSERT_EQ(cache.spare_bytes(), 2 * kSlab);
    // Larger than a spare: the spares are dropped for it, and it is mapped on demand.
    put(cache, 1, kSlab + kMiB);
    EXPECT_LE(cache.mapped_bytes(), budget);
    settle(cache);
    EXPECT_LE(cache.mapped_bytes(), budget);
    WeightCache::Handle h = cache.acquire(key(1, kSlab + kMiB), false);
    ASSERT_EQ(h.outcome, WeightCache::Outcome::kReady);
    EXPECT_EQ(h.data[kSlab], 1);
    cache.unpin(h.entry);
    // A budget filled by pinned entries: spares are never made into the room they need.
    std::vector<WeightCache::Handle> pinned;
    for (uint64_t i = 2; i < 200; ++i) {
        WeightCache::Handle p = cache.acquire(key(i, kMiB));
        if (p.outcome != WeightCache::Outcome::kClaimed) break;
        cache.publish(p.entry);
        pinned.push_back(p);
        EXPECT_LE(cache.mapped_bytes(), budget);
    }
    settle(cache);
    EXPECT_LE(cache.mapped_bytes(), budget);
    for (const WeightCache::Handle &p : pinned) cache.unpin(p.entry);
}

TEST(WeightCache, PinnedEntriesAreNeverEvictedAndTheBudgetHolds) {
    Stats stats;
    WeightCache cache(2 * kChunk, stats);
    put(cache, 1);
    put(cache, 2);
    WeightCache::Handle a = cache.acquire(key(1)), b = cache.acquire(key(2));
    EXPECT_EQ(cache.acquire(key(3)).outcome, WeightCache::Outcome::kUncached) << "room only by evicting a pinned entry";
    EXPECT_EQ(a.data[0], 1);
    EXPECT_EQ(b.data[0], 2);
    cache.unpin(a.entry);
    put(cache, 3);  // now 1 can go
    EXPECT_FALSE(resident(cache, 1));
    EXPECT_EQ(b.data[kChunk - 1], 2) << "the pinned entry's bytes changed";
    cache.unpin(b.entry);
    EXPECT_EQ(stats.resident_bytes.load(), 2 * kChunk);
}

TEST(WeightCache, LargerThanTheWholeBudgetIsNotCached) {
    Stats stats;
    WeightCache cache(kChunk, stats);
    EXPECT_EQ(cache.acquire(key(1, kChunk + 1)).outcome, WeightCache::Outcome::kUncached);
    WeightCache off(0, stats);
    EXPECT_EQ(off.acquire(key(1)).outcome, WeightCache::Outcome::kUncached);
    EXPECT_EQ(stats.resident_bytes.load(), 0u);
}

// The second reader of an entry being read waits for it and reads nothing itself.
TEST(WeightCache, ConcurrentMissesReadOnce) {
    Stats stats;
    WeightCache cache(4 * kChunk, stats);
    WeightCache::Handle loader = cache.acquire(key(7));
    ASSERT_EQ(loader.outcome, WeightCache::Outcome::kClaimed);
    WeightCache::Handle second = cache.acquire(key(7));
    ASSERT_EQ(second.outcome, WeightCache::Outcome::kInFlight);
    uint8_t seen = 0;
    std::thread waiter([&] {
        uint8_t *data = nullptr;
        if (cache.wait(second.entry, &data)) seen = data[5];  // blocks until publish()
        cache.unpin(second.entry);
    });
    std::memset(loader.data, 7, kChunk);
    cache.publish(loader.entry);
    cache.unpin(loader.entry);
    waiter.join();
    EXPECT_EQ(seen, 7);
}

// A reader that fails drops its claim: waiters are told, and the next look-up claims afresh.
TEST(WeightCache, AnAbandonedReadTellsItsWaiters) {
    Stats stats;
    WeightCache cache(4 * kChunk, stats);
    WeightCache::Handle loader = cache.acquire(key(8));
    WeightCache::Handle second = cache.acquire(key(8));
    ASSERT_EQ(second.outcome, WeightCache::Outcome::kInFlight);
    bool waited_ok = true;
    std::thread waiter([&] {
        uint8_t *data = nullptr;
        waited_ok = cache.wait(second.entry, &data);  // on false its pin is gone
    });
    cache.abandon(loader.entry);
    waiter.join();
    EXPECT_FALSE(waited_ok);
    EXPECT_FALSE(resident(cache, 8));
    WeightCache::Handle again = cache.acquire(key(8));
    EXPECT_EQ(again.outcome, WeightCache::Outcome::kClaimed);
    cache.abandon(again.entry);
    EXPECT_EQ(stats.resident_bytes.load(), 0u);
}

uint8_t *refuse(size_t) { return nullptr; }

TEST(WeightCache, RefusedGrowthMeansNotCachedNeverACrash) {
    Stats stats;
    WeightCache cache(64 * kChunk, stats, refuse);
    EXPECT_EQ(cache.acquire(key(1)).outcome, WeightCache::Outcome::kUncached);
    EXPECT_EQ(cache.mapped_bytes(), 0u);
}

size_t g_mapped_calls = 0;
uint8_t *counting_map(size_t bytes) {
    ++g_mapped_calls;
    return SlabPool::map_prefaulted(bytes);
}

// Evicted chunks are reused: cycling through many more entries than fit maps memory only while
// the pool grows to the budget.
TEST(WeightCache, EvictedChunksAreReused) {
    Stats stats;
    g_mapped_calls = 0;
    WeightCache cache(8 * kChunk, stats, counting_map);
    for (uint64_t n = 0; n < 100; ++n) put(cache, n);
    EXPECT_EQ(g_mapped_calls, 1u) << "one slab of eight chunks, then reuse";
    EXPECT_EQ(cache.mapped_bytes(), 8 * kChunk);
}

// Another projection size evicts entries and unmaps their chunks to make room.
TEST(WeightCache, ChunksOfAnotherSizeMakeRoom) {
    Stats stats;
    WeightCache cache(8 * kChunk, stats);
    for (uint64_t n = 0; n < 8; ++n) put(cache, n);
    put(cache, 100, 3 * kChunk);
    EXPECT_TRUE(cache.contains(key(100, 3 * kChunk)));
    EXPECT_LE(cache.mapped_bytes(), 8 * kChunk);
    EXPECT_EQ(stats.resident_bytes.load(), 5 * kChunk + 3 * kChunk);
}

// A call whose uncached bytes can get no streaming memory fails with status 4 before it reads
// anything, and drops the claims it took on the others: were one left Loading, the next reader
// of it would wait forever. (The huge request is refused by the allocator: 64 TiB; under the
// sanitizers sanitizer_options.cpp makes their allocators say so with a null pointer too.)
TEST(CallWeights, NoStreamingMemoryIsStatus4AndDropsItsClaims) {
    char name[] = "/tmp/memra-call-weights-XXXXXX";
    const int fd = mkstemp(name);
    ASSERT_GE(fd, 0);
    unlink(name);
    const std::vector<uint8_t> bytes(kChunk, 7);
    ASSERT_EQ(pwrite(fd, bytes.data(), bytes.size(), 0), ssize_t(bytes.size()));
    CpuProjectionV2 small{};
    small.qtype = MEMRA_QTYPE_F32;
    small.in_features = 1024;
    small.out_features = int32_t(kChunk / 4096);
    small.row_bytes = 4096;
    small.byte_len = kChunk;
    small.scale = 1.0f;
    small.file_fd = fd;
    CpuProjectionV2 huge = small;
    huge.out_features = 1 << 24;
    huge.byte_len = huge.row_bytes << 24;

    Stats counters;
    WeightCache cache(4 * kChunk, counters);
    AlignedBuffer stream;
    const uint64_t read_before = stats().read_bytes.load();
    const uint8_t *small_bytes = nullptr, *huge_bytes = nullptr;
    int32_t status = 0;
    std::string message;
    {
        CallWeights weights(stream, &cache);
        weights.need(small, 0, kGate, &small_bytes);
        weights.need(huge, 0, kUp, &huge_bytes);
        try {
            weights.resolve();
        } catch (const Error &e) {
            status = e.status();
            message = e.what();
        }
    }
    EXPECT_EQ(status, MEMRA_STATUS_OUT_OF_MEMORY) << message;
    EXPECT_NE(message.find("out of memory"), std::string::npos) << message;
    EXPECT_EQ(stats().read_bytes.load(), read_before) << "read before the memory was there";
    CacheKey key;
    key.file = identify_file(fd, 0, kChunk);
    key.length = kChunk;
    EXPECT_FALSE(cache.contains(key)) << "the claim stayed";
    const WeightCache::Handle again = cache.acquire(key);
    EXPECT_EQ(again.outcome, WeightCache::Outcome::kClaimed) << "the next reader must read, not wait";
    if (again.entry) cache.abandon(again.entry);
    EXPECT_EQ(counters.resident_bytes.load(), 0u);
    close(fd);
}

TEST(Settings, ByteSizes) {
    struct Case {
        const char *text;
        bool ok;
        uint64_t bytes;
    };
    for (const Case &c : {Case{"0", true, 0}, Case{"4096", true, 4096}, Case{"512K", true, 512ull << 10},
                          Case{"64m", true, 64ull << 20}, Case{"6G", true, 6ull << 30},
                          Case{"18446744073709551615", true, ~0ull}, Case{"18446744073709551616", false, 0},
                          Case{"17179869184G", false, 0}, Case{"", false, 0}, Case{"G", false, 0},
                          Case{"12Q", false, 0}, Case{"1.5G", false, 0}, Case{"-1", false, 0},
                          Case{" 8G", false, 0}, Case{"8GB", false, 0}}) {
        uint64_t bytes = 0;
        EXPECT_EQ(parse_byte_size(c.text, bytes), c.ok) << "'" << c.text << "'";
        if (c.ok) {
            EXPECT_EQ(bytes, c.bytes) << "'" << c.text << "'";
        }
    }
}

// The memory the default budget is a quarter of, read here independently of settings.cpp:
// MemTotal of /proc/meminfo (the kernel's total RAM, what sysconf(_SC_PHYS_PAGES) reports too),
// lowered to this process's cgroup v2 memory.max when that is a number.
uint64_t memory_for_the_budget() {
    uint64_t memory = 0;
    std::ifstream meminfo("/proc/meminfo");
    for (std::string key; meminfo >> key;) {
        uint64_t kib = 0;
        std::string unit;
        if (key == "MemTotal:" && meminfo >> kib >> unit && unit == "kB") memory = kib * 1024;
        meminfo.ignore(1 << 20, '\n');
    }
    std::ifstream cgroup("/proc/self/cgroup");
    std::string line, path;
    while (std::getline(cgroup, line))
        if (line.compare(0, 3, "0::") == 0) path = line.substr(3);
    std::ifstream max("/sys/fs/cgroup" + path + "/memory.max");
    std::string text;
    if (max >> text && text != "max") memory = std::min<uint64_t>(memory, std::stoull(text));
    return memory;
}

TEST(Settings, DefaultCacheBudgetIsAQuarterOfMemoryAtMost64GiB) {
    const uint64_t memory = memory_for_the_budget();
    ASSERT_GT(memory, 0u) << "no MemTotal in /proc/meminfo";
    EXPECT_EQ(default_cache_bytes(), std::min<uint64_t>(memory / 4, 64ull << 30)) << "memory " << memory << " bytes";
}

}  // namespace
}  // namespace memra
