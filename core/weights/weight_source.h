// Where a call's file-backed projections come from: the weight cache when it has (or can take)
// them, else a per-thread streaming buffer. One CallWeights lives for one compute call and holds
// the pins of every cache entry the call uses, so none is evicted under the kernels; its
// destructor lets them go (and drops claims it could not fill when a read failed).
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "weights/cache.h"
#include "compute/call_plan.h"
#include "error.h"
#include "memra_cpu_experts_v2.h"
#include "compute/scratch.h"

namespace memra {

struct NumaMachine;

// read_exact, counted: read_bytes and io_ns (for compute calls and the prefetch worker alike).
void counted_read(int fd, uint64_t offset, size_t length, uint8_t *dst, int named_fd = -1);

// The library's own descriptor for reading the file `caller_fd` names: a duplicate
// (F_DUPFD_CLOEXEC), or with `direct_io` (MEMRA_CPU_EXPERT_DIRECT_IO=1) a reopening of the same file with
// O_DIRECT where the filesystem allows it (reopen_direct, io.h; else the duplicate). -1 with errno
// set when no descriptor could be had (EBADF: `caller_fd` is not open).
int reading_descriptor(int caller_fd, bool direct_io);

// Each file the call reads is read through a duplicate of the caller's descriptor that the call
// owns, identified through that duplicate (fstat), and checked again after every read: the bytes
// come from the very file whose identity keys them, whatever the caller does to its descriptor
// meanwhile (dup2 another file onto it, close it), and a file changed during the read (truncated,
// rewritten) is never taken for the one identified. Such a change makes the call start over once;
// a second one is status 3 ("file changed during read"). At the descriptor limit the caller's
// descriptor is read directly, checked the same way, and nothing read through it is cached
// (docs/file-weights.md, "Reads").
// Where a call's claimed cache entries are placed (docs/numa.md, "Memory placement"), set by the
// call once its tiles are cut: a team spread over nodes gets each group's rows of an entry on that
// group's node (the rows its tiles compute), a team on one node of several the whole entry there.
struct ClaimPlacement {
    const NumaMachine *machine = nullptr;
    const CallPlan *plan = nullptr;
    const int32_t *group_node = nullptr;  // per tile group, its index in machine->nodes
    int32_t groups = 1;
    int32_t home_node = -1;               // groups == 1: the node of every entry
    bool log = false;                     // the load log is on: faults say one line
};

class CallWeights {
public:
    // `stream` holds what is not cached in this call; nullptr cache: nothing is cached.
    // `direct_io`: read as reading_descriptor says (the library passes its setting).
    CallWeights(AlignedBuffer &stream, WeightCache *cache, bool direct_io = false);
    CallWeights(const CallWeights &) = delete;
    CallWeights &operator=(const CallWeights &) = delete;
    ~CallWeights();

    // Resolves every file-backed projection of `plan` (source->file_fd >= 0): its `weights` then
    // point at the cached or streamed bytes until this object is destroyed. As resolve() below.
    void resolve(CallPlan &plan);

    // A projection (file_fd >= 0) whose bytes the call needs; `*dst` is set by resolve().
    // `expert` and `kind` (ProjectionKind) name it in messages (expert_label, call_plan.h).
    // `kernel`: the kernel that will read the bytes, whose layout they are wanted in (nullptr:
    // ggml's). A kernel with a layout of its own gets them from the cache entry of that layout,
    // filled by reading the file and repacking once (repack.h); bytes the cache cannot take are
    // repacked in the streaming memory, for this call only.
    void need(const CpuProjectionV2 &p, int32_t expert, int32_t kind, const uint8_t **dst,
              const memra_kernel_v2 *kernel = nullptr);

    // Hits, waits for reads in flight, reads the rest. Throws status 3 naming the expert, the
    // projection, the read and the reason; status 4 when no streaming memory can be had.
    void resolve();

    // The same work as resolve(plan), overlapped with compute (docs/file-weights.md, "Reads
    // overlapped with compute"). begin() does what resolve() does before reading (identifies the
    // files, pins the hits, claims the misses, maps streaming memory: its errors are thrown from
    // it) and leaves the reads, and the waits for other readers, as items that any threads may run
    // concurrently with fetch(i); each pending projection's `ready` (call_plan.h) says when its
    // bytes are in. The call's own reads come before its waits (items 0 to pending_reads() - 1),
    // so no two calls can wait on each other as long as items are begun in order.
    void begin(CallPlan &plan);
    size_t pending() const { return pending_.size(); }
    size_t pending_reads() const { return pending_reads_; }
    size_t pending_plan_expert(size_t i) const;  // the plan's index of the item's expert
    void fetch(size_t i) noexcept;               // never throws: a failure is kept for finish()
    bool failed() const { return failed_.load(std::memory_order_acquire); }
    // From now on, each entry this call claims is placed as `placement` says before it is read
    // into (nullptr: nowhere in particular, the default). Kept by pointer: it outlives the call.
    void place_claims(const ClaimPlacement *placement) { placement_ = placement; }
    // After every item has run. True: all bytes are in. False: an item failed and the bytes are
    // resolved again as resolve() would have (a file changed under a read starts the call over,
    // counting as its first attempt; an entry another reader gave up is read by this call): the
    // caller must compute again. Throws the error of the earliest failed item otherwise, the one
    // resolve() would have thrown.
    bool finish();

private:
    enum class Hold { kNothing, kPin, kClaim };
    // One descriptor of the caller's in this call.
    struct OpenFile {
        int caller_fd = -1;
        int fd = -1;         // the call's duplicate, or caller_fd when none could be had
        bool owned = false;  // fd is the duplicate: closed when the call is done; its reads are cached
        FileSnapshot snapshot;
    };
    struct Request {
        const CpuProjectionV2 *p;
        int32_t expert;
        int32_t kind;
        const uint8_t **dst;
        const memra_kernel_v2 *kernel;  // the bytes are wanted in its layout (nullptr: ggml's)
        size_t file;  // in files_
        CacheKey key;
        WeightCache::Handle handle;
        Hold hold = Hold::kNothing;
        size_t stream_offset = 0;
        uint8_t *stream = nullptr;               // uncached: where in the streaming memory
        size_t plan_expert = 0;                  // begin(): the plan's index of the expert
        std::atomic<int32_t> *state = nullptr;   // begin(): ReadState, for the tiles
    };
    struct FileChanged {
        const Request *request;
    };
    struct Reread {};  // a pipelined wait whose reader gave up

    static std::vector<Request> &thread_requests();
    static std::vector<OpenFile> &thread_files();
    void open_files();
    void close_files() noexcept;
    void release_holds() noexcept;
    void resolve_once();  // throws FileChanged when a file changed under a read
    void resolve_from(int first_attempt);
    void need_plan(CallPlan &plan);  // need() for every file-backed projection of `plan`
    // One round of resolve_once, in three steps: pins, claims and streaming memory for every
    // request of `round`; then a request's read (its own claim, or uncached); then a wait for
    // another reader (false when that reader gave up: the request is read again).
    void acquire_round(const std::vector<Request *> &round, AlignedBuffer &buffer);
    void fetch_own(Request &r);
    void place_claim(const Request &r);  // as placement_ says (not null)
    bool wait_for_reader(Request &r);
    // counted_read, checked, then repacked into the kernel's layout; errors named after the
    // projection.
    void read(Request &r, uint8_t *dst);
    void keep_failure(size_t item, std::exception_ptr failure, bool reread) noexcept;
    [[noreturn]] static void rethrow_for(const Request &r, const Error &e);

    AlignedBuffer &stream_;
    WeightCache *cache_;
    const ClaimPlacement *placement_ = nullptr;
    const bool direct_io_;
    std::vector<Request> &requests_;  // this thread's, reused call after call
    std::vector<OpenFile> &files_;    // likewise
    std::vector<std::unique_ptr<AlignedBuffer>> retry_buffers_;
    // Of the current attempt, counted when it is not started over (atomic: pipelined reads).
    std::atomic<uint64_t> hits_{0}, misses_{0};

    // The pipeline (begin .. finish): the pending requests, reads first, then waits; one state
    // per request (ReadState), allocated as the call's count grows and kept by the thread.
    std::vector<Request *> pending_;
    size_t pending_reads_ = 0;
    std::atomic<bool> failed_{false};
    std::mutex failure_mutex_;
    size_t failed_item_ = SIZE_MAX;  // the earliest failed item, under failure_mutex_
    std::exception_ptr failure_;     // its error; null when it is to be read again
    bool reread_ = false;            // an item failed in a way resolve() retries
    static std::unique_ptr<std::atomic<int32_t>[]> &thread_states(size_t count);
};

}  // namespace memra
