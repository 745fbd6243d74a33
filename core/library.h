// The library's process-wide state in one object: the settings (read once at load), the backend
// registry built from them, the weight cache (its budget from the settings), the prefetch worker
// filling that cache, and the counters. Created once, on first use (thread-safe; the core
// library's load constructor triggers it), and never destroyed: engine threads and the prefetch
// worker may still be inside the library while the process exits, and unloading plugins or
// unmapping the cache under them would crash what should be a clean exit.
//
// The pieces do not reach for each other: each is handed what it needs here (the cache its
// budget and counters, the prefetcher its cache and the direct-I/O setting), so that tests and
// tools can build any of them on their own (the conformance runner, its own registries).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

#include "dispatch/backend_registry.h"
#include "weights/cache.h"
#include "weights/prefetch.h"
#include "dispatch/settings.h"
#include "numa/topology.h"
#include "stats.h"

namespace memra {

class Library {
public:
    static Library &instance();

    const Settings &settings() const { return registry_.settings(); }
    const BackendRegistry &registry() const { return registry_; }
    // The NUMA nodes, read at load (numa/topology.h).
    const NumaMachine &numa() const { return numa_; }
    Stats &stats() { return stats_; }
    // Made on first use (a process that never reads a file maps nothing), ready for fork(): the
    // cache's and the prefetcher's pthread_atfork handlers are registered as each is made.
    WeightCache &cache();
    Prefetcher &prefetcher();

    // At unload or exit: stops the prefetch worker, if one was made, without waiting long.
    static void stop_prefetcher() noexcept;

    Library(const Library &) = delete;
    Library &operator=(const Library &) = delete;

private:
    Library();
    ~Library() = delete;  // never destroyed (above)
    // The calling thread's prefetch hints are placed like its last call's reads (prefetch.h).
    std::shared_ptr<const PrefetchPlacement> prefetch_placement() const;

    BackendRegistry registry_;  // owns the settings it was built from
    Stats &stats_;
    NumaMachine numa_;
    std::once_flag cache_once_, prefetcher_once_;
    WeightCache *cache_ = nullptr;
    std::atomic<Prefetcher *> prefetcher_{nullptr};
};

}  // namespace memra
