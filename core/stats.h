// Process-wide counters behind memra_cpu_expert_cache_stats_v2 / _profile_stats_v2. Relaxed
// atomics: each counter is monotonic and independently meaningful, no ordering between them is
// promised, and a reader on any thread sees a value that some moment of the process had.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "numa/placement.h"

namespace memra {

struct Stats {
    std::atomic<uint64_t> cache_hits{0};
    std::atomic<uint64_t> cache_misses{0};
    std::atomic<uint64_t> read_bytes{0};
    std::atomic<uint64_t> resident_bytes{0};
    std::atomic<uint64_t> prepare_ns{0};
    std::atomic<uint64_t> io_ns{0};
    std::atomic<uint64_t> insert_ns{0};
    std::atomic<uint64_t> compute_ns{0};
    // Not in the ABI: the prefetch queue's own account, shown in the describe line.
    std::atomic<uint64_t> prefetch_queued{0};   // projections handed to the worker
    std::atomic<uint64_t> prefetch_dropped{0};  // refused: the queue was full
    std::atomic<uint64_t> prefetch_skipped{0};  // already resident or in flight, no room, or caching off
    std::atomic<uint64_t> prefetch_failed{0};   // the worker's read failed (the compute call will say why)
    // Not in the ABI (memra_cpu_expert_stats_v2 has no per-node field): the bytes of resident
    // cache entries placed on each node (an index in NumaMachine::nodes; docs/numa.md), shown in
    // the describe line. Entries not placed (one node, NUMA off, a fault) are in none of them.
    std::atomic<uint64_t> resident_on_node[kMaxPlacedNodes] = {};
};

Stats &stats();

// "; cache budget <bytes> bytes; prefetch queued <n> dropped <n> skipped <n> failed <n>", the
// describe line's tail: the prefetch queue's account, which the ABI counters do not carry.
std::string describe_cache(uint64_t budget);

// "; cache placed on node <id> <bytes> bytes, node <id> <bytes> bytes" (each node of `machine`
// up to kMaxPlacedNodes, by its id), the describe line's per-node residency; "" unless the library
// places memory on `machine` (placement_on) or has placed some.
std::string describe_placement(const NumaMachine &machine);

// Adds the time since construction (or the last lap) to a counter.
class StopWatch {
public:
    StopWatch() : start_(std::chrono::steady_clock::now()) {}
    void lap_into(std::atomic<uint64_t> &counter) {
        const auto now = std::chrono::steady_clock::now();
        counter.fetch_add(static_cast<uint64_t>(
                              std::chrono::duration_cast<std::chrono::nanoseconds>(now - start_).count()),
                          std::memory_order_relaxed);
        start_ = now;
    }
    void restart() { start_ = std::chrono::steady_clock::now(); }

private:
    std::chrono::steady_clock::time_point start_;
};

}  // namespace memra
