// memra_cpu_expert_prefetch_v2's worker: file-backed projections are queued (each file's fd
// duplicated first and identified through the duplicate, so the caller may close its own or put
// another file on it) and read into the weight cache by one background thread, started on first
// use. The queue is bounded; what does not fit is dropped and counted (Stats::prefetch_*). The
// thread is detached and told to stop at unload or exit: it never holds up the process's exit,
// and a read it has started is simply abandoned with the process. In a child made by fork() the
// queue starts empty and a worker of the child's own is started by its first prefetch.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "weights/cache.h"
#include "memra/backend.h"
#include "memra_cpu_experts_v2.h"

namespace memra {

struct NumaMachine;

// Where the worker places the entries of one hint (docs/numa.md, "Memory placement"): as the
// hinting thread's last call laid its team out, each group's share of a matrix's rows (split_rows,
// at the tiles' row multiple) on its node, or every entry on the team's one node.
struct PrefetchPlacement {
    const NumaMachine *machine = nullptr;
    int32_t groups = 1;
    int32_t home_node = -1;
    std::vector<int32_t> members, nodes;  // per group: its members, its index in machine->nodes
    bool log = false;
};

class Prefetcher {
public:
    static constexpr size_t kQueueCapacity = 1024;

    // The kernel whose layout a projection of a qtype is to be cached in: the one the calls that
    // will want it plan (library.h: prefetch_kernel, call_plan.h). nullptr: ggml's layout.
    using KernelFor = std::function<const memra_kernel_v2 *(int32_t qtype)>;

    // Fills `cache`, reading through descriptors of reading_descriptor(fd, direct_io)
    // (weight_source.h), each entry in the layout of kernel_for's kernel (repacked once after its
    // read, repack.h), so that the calls find it. The library's own (library.h) is never destroyed.
    // The placement of the calling thread's hints (nullptr: none), asked once per enqueue().
    using PlacementFor = std::function<std::shared_ptr<const PrefetchPlacement>()>;
    Prefetcher(WeightCache &cache, bool direct_io, KernelFor kernel_for = {}, PlacementFor placement_for = {})
        : cache_(cache), direct_io_(direct_io), kernel_for_(std::move(kernel_for)),
          placement_for_(std::move(placement_for)) {}

    // Queues projections[i] with file_fd >= 0 that are neither resident nor in flight, and
    // returns. Throws status 3 (naming "projection i") when a fd cannot be examined; then
    // nothing of this call is queued.
    void enqueue(const CpuProjectionV2 *projections, int32_t count);

    // Tells the worker to stop (queued jobs are dropped) and waits at most `patience_ms` for it.
    void stop(int patience_ms);

    // fork(), through pthread_atfork (see WeightCache::before_fork): in the child the worker does
    // not exist, so its queue is emptied (the duplicates closed) and the next prefetch starts one.
    void before_fork();
    void after_fork_in_parent();
    void after_fork_in_child();

private:
    struct Job {
        CacheKey key;
        int fd;  // a duplicate shared by the jobs of one file
        const memra_kernel_v2 *kernel;  // repacked for it after the read (nullptr: ggml's layout)
        size_t row_bytes;
        int32_t rows, n;
        std::shared_ptr<const PrefetchPlacement> placement;  // nullptr: not placed
    };
    struct OpenFile {
        int fd;
        int jobs;
    };

    void start_locked();  // when the worker cannot be started, the queue is dropped (counted)
    void run();
    void read_into_cache(const Job &job);  // unlocked; throws when the read fails
    void place(const Job &job, const WeightCache::Handle &claim);  // as job.placement says
    void finish(const Job &job);  // lock held: the job's share of its duplicate fd goes

    WeightCache &cache_;
    const bool direct_io_;
    const KernelFor kernel_for_;
    const PlacementFor placement_for_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<Job> queue_;
    std::map<std::array<uint64_t, 4>, OpenFile> files_;  // FileIdentity -> duplicate fd
    bool started_ = false, stopping_ = false, exited_ = false;
};

}  // namespace memra
