#include "library.h"

#include <pthread.h>

#include <cstdio>

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
        Prefetcher *p = new Prefetcher(cache(), settings().direct_io,
                                       [this](int32_t qtype) { return prefetch_kernel(registry_, qtype); });
        // Registered after the cache's handlers: the prefetcher's lock is taken first, then the
        // cache's (no thread ever holds the cache's lock while it waits for this one).
        pthread_atfork([] { g_library.load()->prefetcher_.load()->before_fork(); },
                       [] { g_library.load()->prefetcher_.load()->after_fork_in_parent(); },
                       [] { g_library.load()->prefetcher_.load()->after_fork_in_child(); });
        prefetcher_.store(p, std::memory_order_release);
    });
    return *prefetcher_.load(std::memory_order_acquire);
}

void Library::stop_prefetcher() noexcept {
    const Library *l = g_library.load(std::memory_order_acquire);
    if (!l) return;
    if (Prefetcher *p = l->prefetcher_.load(std::memory_order_acquire)) p->stop(100);
}

}  // namespace memra
