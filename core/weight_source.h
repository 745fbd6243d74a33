// Where a call's file-backed projections come from: the weight cache when it has (or can take)
// them, else a per-thread streaming buffer. One CallWeights lives for one compute call and holds
// the pins of every cache entry the call uses, so none is evicted under the kernels; its
// destructor lets them go (and drops claims it could not fill when a read failed).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cache.h"
#include "error.h"
#include "memra_cpu_experts_v2.h"
#include "scratch.h"

namespace memra {

// read_exact, counted: read_bytes and io_ns (for compute calls and the prefetch worker alike).
void counted_read(int fd, uint64_t offset, size_t length, uint8_t *dst);

class CallWeights {
public:
    // `stream` holds what is not cached in this call; nullptr cache: nothing is cached.
    explicit CallWeights(AlignedBuffer &stream, WeightCache *cache = &WeightCache::instance());
    CallWeights(const CallWeights &) = delete;
    CallWeights &operator=(const CallWeights &) = delete;
    ~CallWeights();

    // A projection (file_fd >= 0) whose bytes the call needs; `*dst` is set by resolve().
    // `expert` < 0 names the rows call's single expert ("expert gate" rather than "expert 0 gate").
    void need(const CpuProjectionV2 &p, int32_t expert, const char *name, const uint8_t **dst);

    // Hits, waits for reads in flight, reads the rest. Throws status 3 naming the expert, the
    // projection, the read and the reason; status 4 when no streaming memory can be had.
    void resolve();

private:
    enum class Hold { kNothing, kPin, kClaim };
    struct Request {
        const CpuProjectionV2 *p;
        int32_t expert;
        const char *name;
        const uint8_t **dst;
        CacheKey key;
        WeightCache::Handle handle;
        Hold hold = Hold::kNothing;
        size_t stream_offset = 0;
    };

    static std::vector<Request> &thread_requests();
    void identify_all();
    void read(Request &r, uint8_t *dst);  // counted_read, errors named after the projection
    [[noreturn]] static void rethrow_for(const Request &r, const Error &e);

    AlignedBuffer &stream_;
    WeightCache *cache_;
    std::vector<Request> &requests_;  // this thread's, reused call after call
    std::vector<std::unique_ptr<AlignedBuffer>> retry_buffers_;
};

}  // namespace memra
