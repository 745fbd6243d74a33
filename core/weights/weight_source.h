// Where a call's file-backed projections come from: the weight cache when it has (or can take)
// them, else a per-thread streaming buffer. One CallWeights lives for one compute call and holds
// the pins of every cache entry the call uses, so none is evicted under the kernels; its
// destructor lets them go (and drops claims it could not fill when a read failed).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "weights/cache.h"
#include "compute/call_plan.h"
#include "error.h"
#include "memra_cpu_experts_v2.h"
#include "compute/scratch.h"

namespace memra {

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
    void need(const CpuProjectionV2 &p, int32_t expert, int32_t kind, const uint8_t **dst);

    // Hits, waits for reads in flight, reads the rest. Throws status 3 naming the expert, the
    // projection, the read and the reason; status 4 when no streaming memory can be had.
    void resolve();

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
        size_t file;  // in files_
        CacheKey key;
        WeightCache::Handle handle;
        Hold hold = Hold::kNothing;
        size_t stream_offset = 0;
    };
    struct FileChanged {
        const Request *request;
    };

    static std::vector<Request> &thread_requests();
    static std::vector<OpenFile> &thread_files();
    void open_files();
    void close_files() noexcept;
    void release_holds() noexcept;
    void resolve_once();  // throws FileChanged when a file changed under a read
    void read(Request &r, uint8_t *dst);  // counted_read, checked; errors named after the projection
    [[noreturn]] static void rethrow_for(const Request &r, const Error &e);

    AlignedBuffer &stream_;
    WeightCache *cache_;
    const bool direct_io_;
    std::vector<Request> &requests_;  // this thread's, reused call after call
    std::vector<OpenFile> &files_;    // likewise
    std::vector<std::unique_ptr<AlignedBuffer>> retry_buffers_;
    uint64_t hits_ = 0, misses_ = 0;  // of the current attempt, counted when it is not started over
};

}  // namespace memra
