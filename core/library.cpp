#include "library.h"

#include <pthread.h>

#include <cstdio>

#include "compute/team_layout.h"
#include "numa/placement.h"

namespace memra {
namespace {

std::atomic<Library *> g_library{nullptr};  // for the fork handlers and the unload destructor

// At unload or exit: stop the worker without waiting long for a read it may be in.
__attribute__((destructor)) void stop_at_unload() { Library::stop_prefetcher(); }

}  // namespace

Library &Library::instance() {
    static Library *library = [] {
        auto *l = new Library();
        g_library.store(l, std::memory_order_release);
        return l;
    }();
    return *library;
}

Library::Library()
    : registry_(read_settings(), detect_cpu_features(), default_backend_dir()), stats_(memra::stats()) {
    const Settings &s = registry_.settings();
    NumaSources sources;
    sources.fake_topology = s.numa_topology;
    sources.numa_on = s.numa;
    numa_ = read_numa_machine(sources);
    for (const std::string &w : s.warnings) std::fprintf(stderr, "memra-cpu-experts: %s\n", w.c_str());
    if (s.log) {
        for (const std::string &n : s.log_notes) std::fprintf(stderr, "memra-cpu-experts: %s\n", n.c_str());
        // A machine of one node logs nothing more than before.
        if (numa_.nodes.size() > 1)
            for (const std::string &n : numa_.notes) std::fprintf(stderr, "memra-cpu-experts: %s\n", n.c_str());
        std::fprintf(stderr, "%s\n", registry_.describe().c_str());
    }
}

WeightCache &Library::cache() {
    std::call_once(cache_once_, [this] {
        // prefault: the cache grows ahead of demand, its spare slabs faulted in by a background
        // thread (cache.h), so the faulting of fresh memory leaves the calls' path.
        cache_ = new WeightCache(settings().cache_bytes, stats_, SlabPool::map_prefaulted, /*prefault=*/true);
        pthread_atfork([] { g_library.load()->cache_->before_fork(); },
                       [] { g_library.load()->cache_->after_fork_in_parent(); },
                       [] { g_library.load()->cache_->after_fork_in_child(); });
    });
    return *cache_;
}

Prefetcher &Library::prefetcher() {
    std::call_once(prefetcher_once_, [this] {
        // Entries in the layout the token calls will plan for them (prefetch_kernel).
        // Entries placed as the hinting thread's last call laid out its team (numa/placement.h).
        Prefetcher *p = new Prefetcher(cache(), settings().direct_io,
                                       [this](int32_t qtype) { return prefetch_kernel(registry_, qtype); },
                                       [this] { return prefetch_placement(); });
        // Registered after the cache's handlers: the prefetcher's lock is taken first, then the
        // cache's (no thread ever holds the cache's lock while it waits for this one).
        pthread_atfork([] { g_library.load()->prefetcher_.load()->before_fork(); },
                       [] { g_library.load()->prefetcher_.load()->after_fork_in_parent(); },
                       [] { g_library.load()->prefetcher_.load()->after_fork_in_child(); });
        prefetcher_.store(p, std::memory_order_release);
    });
    return *prefetcher_.load(std::memory_order_acquire);
}

std::shared_ptr<const PrefetchPlacement> Library::prefetch_placement() const {
    const TeamLayout &team = last_team_layout();
    if ((team.groups < 2 && team.home_node < 0) || !placement_on(numa_)) return nullptr;
    auto placement = std::make_shared<PrefetchPlacement>();
    placement->machine = &numa_;
    placement->groups = team.groups;
    placement->home_node = team.home_node;
    placement->log = settings().log;
    if (team.groups > 1) {
        placement->members.assign(team.group_members, team.group_members + team.groups);
        placement->nodes.assign(team.group_numa_node, team.group_numa_node + team.groups);
    }
    return placement;
}

void Library::stop_prefetcher() noexcept {
    const Library *l = g_library.load(std::memory_order_acquire);
    if (!l) return;
    if (Prefetcher *p = l->prefetcher_.load(std::memory_order_acquire)) p->stop(100);
}

}  // namespace memra
