#include "compute/team.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "signals_blocked.h"

namespace memra {
namespace {

using Clock = std::chrono::steady_clock;

// How long an idle helper, or a caller waiting for its helpers, spins before it sleeps: long
// enough to catch the next call of a burst (a layer's experts, token after token), short enough
// not to hold a core another engine thread or process could use (OpenMP's default active wait,
// some milliseconds, did; docs/benchmarks.md).
constexpr auto kSpin = std::chrono::microseconds(50);
// After a helper could not be started, the calls of the next second do not try again (each try
// costs a failed stack mapping or clone).
constexpr auto kRetryAfter = std::chrono::seconds(1);

inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

// Bumped in every child made by fork(): helpers started under an older value belong to the parent
// and do not exist here.
std::atomic<uint64_t> g_fork_generation{0};
void entered_forked_child() { g_fork_generation.fetch_add(1, std::memory_order_relaxed); }
[[maybe_unused]] const bool g_fork_handler = pthread_atfork(nullptr, nullptr, &entered_forked_child) == 0;

// One group's items of a job spread over groups (run_team_groups).
struct GroupQueue {
    const long *items = nullptr;
    long count = 0;
    std::atomic<long> next{0};
};

struct Job {
    void (*work)(void *, long);
    void *context;
    long count;  // a flat job's items: 0 .. count - 1
    std::atomic<long> next{0};
    std::atomic<int32_t> running{0};  // helpers handed this job that have not finished with it
    GroupQueue *queues = nullptr;      // a job spread over groups: their queues, else nullptr
    int32_t n_queues = 0;
};

// A member of group `home` takes its group's items, then the other groups' in turn.
void run_items(Job &job, int32_t home) {
    if (!job.queues) {
        for (long i; (i = job.next.fetch_add(1, std::memory_order_relaxed)) < job.count;) job.work(job.context, i);
        return;
    }
    for (int32_t k = 0; k < job.n_queues; ++k) {
        GroupQueue &q = job.queues[(home + k) % job.n_queues];
        for (long i; (i = q.next.fetch_add(1, std::memory_order_relaxed)) < q.count;) job.work(job.context, q.items[i]);
    }
}

class Crew;

struct Helper {
    Crew *crew = nullptr;
    std::mutex mutex;
    std::condition_variable wake;
    std::atomic<Job *> job{nullptr};
    int32_t home = 0;  // its group in a job spread over groups; written before `job` is handed
    bool stop = false;  // under mutex
    pthread_t thread{};
    // Where it is pinned: the (pin_key, node) of its CPU set (team.h); 0: never pinned, it runs
    // where the caller's mask at its start let it.
    uint64_t pin_key = 0;
    int32_t pin_node = -1;
};

// One calling thread's helpers.
class Crew {
public:
    const uint64_t generation = g_fork_generation.load(std::memory_order_relaxed);
    Crew *next_abandoned = nullptr;

    ~Crew() {
        for (auto &h : helpers_) {
            {
                std::lock_guard<std::mutex> lock(h->mutex);
                h->stop = true;
            }
            h->wake.notify_one();
            pthread_join(h->thread, nullptr);
        }
    }

    // Starts helpers until there are `wanted` (or one cannot be started); returns how many there are.
    size_t grow_to(size_t wanted) {
        if (helpers_.size() >= wanted || Clock::now() < next_try_) return std::min(helpers_.size(), wanted);
        while (helpers_.size() < wanted) {
            std::unique_ptr<Helper> h;
            try {
                h.reset(new Helper);
                helpers_.reserve(helpers_.size() + 1);
            } catch (const std::bad_alloc &) {
                break;
            }
            h->crew = this;
            int error;
            {
                AllSignalsBlocked blocked;
                error = pthread_create(&h->thread, nullptr, &helper_main, h.get());
            }
            if (error != 0) {  // no memory for a stack, a thread limit: go on with those there are
                next_try_ = Clock::now() + kRetryAfter;
                break;
            }
            pthread_setname_np(h->thread, "memra-helper");
            helpers_.push_back(std::move(h));  // reserved: cannot throw
        }
        return helpers_.size();
    }

    // Pins helper i to `cpus` unless it is pinned there already (same key and node). A refusal (a
    // CPU gone offline since the layout was made) leaves it where it was: only speed depends on it.
    void pin(size_t i, uint64_t key, int32_t node, const cpu_set_t &cpus) {
        Helper &h = *helpers_[i];
        if (h.pin_key == key && h.pin_node == node) return;
        pthread_setaffinity_np(h.thread, sizeof cpus, &cpus);
        h.pin_key = key;
        h.pin_node = node;
        any_pinned_ = true;
    }

    // After calls spread over groups, a flat call: the helpers get the caller's mask back (today's
    // behaviour: they run wherever the caller may).
    void unpin() {
        if (!any_pinned_) return;
        cpu_set_t mask;
        if (sched_getaffinity(0, sizeof mask, &mask) != 0) return;
        for (auto &h : helpers_) {
            pthread_setaffinity_np(h->thread, sizeof mask, &mask);
            h->pin_key = 0;
            h->pin_node = -1;
        }
        any_pinned_ = false;
    }

    void hand(size_t i, Job *job, int32_t home = 0) {
        Helper &h = *helpers_[i];
        h.home = home;
        h.job.store(job, std::memory_order_release);
        { std::lock_guard<std::mutex> lock(h.mutex); }  // the helper is either before its check or waiting
        h.wake.notify_one();
    }

    void wait_for_helpers(Job &job) {
        const Clock::time_point until = Clock::now() + kSpin;
        for (int i = 1; job.running.load(std::memory_order_acquire) != 0; ++i) {
            if (i % 64 == 0 && Clock::now() > until) {
                std::unique_lock<std::mutex> lock(mutex_);
                done_.wait(lock, [&] { return job.running.load(std::memory_order_acquire) == 0; });
                return;
            }
            relax();
        }
    }

private:
    static void *helper_main(void *arg) {
        Helper &h = *static_cast<Helper *>(arg);
        while (Job *job = next_job(h)) {
            run_items(*job, h.home);
            // The job lives on the caller's stack: not touched after this.
            if (job->running.fetch_sub(1, std::memory_order_acq_rel) == 1) {
                Crew &crew = *h.crew;
                { std::lock_guard<std::mutex> lock(crew.mutex_); }
                crew.done_.notify_one();
            }
        }
        return nullptr;
    }

    static Job *next_job(Helper &h) {
        const Clock::time_point until = Clock::now() + kSpin;
        for (int i = 1;; ++i) {
            if (Job *job = h.job.exchange(nullptr, std::memory_order_acquire)) return job;
            if (i % 64 == 0 && Clock::now() > until) break;
            relax();
        }
        std::unique_lock<std::mutex> lock(h.mutex);
        for (;;) {
            if (Job *job = h.job.exchange(nullptr, std::memory_order_acquire)) return job;
            if (h.stop) return nullptr;
            h.wake.wait(lock);
        }
    }

    std::vector<std::unique_ptr<Helper>> helpers_;
    Clock::time_point next_try_{};
    bool any_pinned_ = false;
    std::mutex mutex_;
    std::condition_variable done_;  // some job's last helper finished
};

// Crews of a parent process, left behind in a forked child: their helpers do not exist here, so
// they are neither used nor joined (that would wait forever) nor destroyed (their mutexes and
// condition variables may show waiters that are gone). Kept reachable, for leak checkers.
std::atomic<Crew *> g_abandoned{nullptr};

void abandon(Crew *crew) {
    crew->next_abandoned = g_abandoned.load(std::memory_order_relaxed);
    while (!g_abandoned.compare_exchange_weak(crew->next_abandoned, crew, std::memory_order_relaxed)) {
    }
}

bool current(const Crew *crew) { return crew->generation == g_fork_generation.load(std::memory_order_relaxed); }

// The calling thread's crew, made on first use; joined and freed when the thread exits.
struct CrewSlot {
    Crew *crew = nullptr;
    ~CrewSlot() {
        if (!crew) return;
        if (current(crew))
            delete crew;
        else
            abandon(crew);
    }
};

Crew *this_thread_crew() {
    thread_local CrewSlot slot;
    if (slot.crew && !current(slot.crew)) {
        abandon(slot.crew);
        slot.crew = nullptr;
    }
    if (!slot.crew) slot.crew = new (std::nothrow) Crew;
    return slot.crew;
}

}  // namespace

void run_team(int32_t size, long count, void (*work)(void *, long), void *context) {
    Job job{work, context, count};
    const size_t wanted = size > 1 && count > 1 ? size_t(std::min<long>(size, count)) - 1 : 0;
    Crew *crew = wanted ? this_thread_crew() : nullptr;
    const size_t helpers = crew ? crew->grow_to(wanted) : 0;
    if (helpers) crew->unpin();
    job.running.store(int32_t(helpers), std::memory_order_relaxed);
    for (size_t i = 0; i < helpers; ++i) crew->hand(i, &job);
    run_items(job, 0);
    if (helpers) crew->wait_for_helpers(job);
}

int32_t team_helpers(int32_t wanted) {
    if (wanted <= 0) return 0;
    Crew *crew = this_thread_crew();
    return crew ? static_cast<int32_t>(crew->grow_to(static_cast<size_t>(wanted))) : 0;
}

void run_team_groups(const TeamGroup *groups, int32_t count, int32_t caller_group, uint64_t pin_key,
                     void (*work)(void *, long), void *context) {
    // The queues' counters, reused call after call on this thread (the job is on its stack).
    thread_local std::unique_ptr<GroupQueue[]> queues;
    thread_local int32_t capacity = 0;
    if (capacity < count) {
        queues.reset(new GroupQueue[static_cast<size_t>(count)]);
        capacity = count;
    }
    size_t helpers = 0;
    for (int32_t g = 0; g < count; ++g) {
        queues[g].items = groups[g].items;
        queues[g].count = groups[g].count;
        queues[g].next.store(0, std::memory_order_relaxed);
        helpers += static_cast<size_t>(groups[g].helpers);
    }
    Job job{work, context, 0};
    job.queues = queues.get();
    job.n_queues = count;
    Crew *crew = helpers ? this_thread_crew() : nullptr;
    if (crew && crew->grow_to(helpers) < helpers) crew = nullptr;  // team_helpers() said there were
    job.running.store(crew ? int32_t(helpers) : 0, std::memory_order_relaxed);
    if (crew) {
        size_t i = 0;
        for (int32_t g = 0; g < count; ++g)
            for (int32_t k = 0; k < groups[g].helpers; ++k, ++i) {
                crew->pin(i, pin_key, groups[g].node, *groups[g].cpus);
                crew->hand(i, &job, g);
            }
    }
    run_items(job, caller_group);  // without helpers the caller takes every group's items in turn
    if (crew) crew->wait_for_helpers(job);
}

}  // namespace memra
