#include "weight_source.h"

#include <cstdint>
#include <new>
#include <string>

#include "io.h"
#include "stats.h"

namespace memra {
namespace {

size_t padded(size_t bytes) { return (bytes + 63) & ~size_t{63}; }

// Memory for what this call reads uncached (the cache had no room, or could not grow). Refused,
// it is status 4 with the amount, rather than the bare "out of memory" of the C boundary.
uint8_t *stream_memory(AlignedBuffer &buffer, size_t bytes) {
    // Above 2^63 no such memory exists (the address space is 2^47 or 2^56 bytes), and
    // AlignedBuffer's doubling would wrap.
    if (bytes <= (SIZE_MAX >> 1)) {
        try {
            return buffer.reserve(bytes);
        } catch (const std::bad_alloc &) {
        }
    }
    fail(MEMRA_STATUS_OUT_OF_MEMORY, "out of memory: no memory for the " + std::to_string(bytes) +
                                         " bytes of file weights this call reads uncached");
}

}  // namespace

void counted_read(int fd, uint64_t offset, size_t length, uint8_t *dst) {
    StopWatch io;
    read_exact(fd, offset, length, dst);
    io.lap_into(stats().io_ns);
    stats().read_bytes.fetch_add(length, std::memory_order_relaxed);
}

std::vector<CallWeights::Request> &CallWeights::thread_requests() {
    // Calls do not nest on a thread, so one CallWeights at a time uses this thread's vector.
    thread_local std::vector<Request> requests;
    return requests;
}

CallWeights::CallWeights(AlignedBuffer &stream, WeightCache *cache)
    : stream_(stream), cache_(cache && cache->budget() > 0 ? cache : nullptr), requests_(thread_requests()) {
    requests_.clear();
}

CallWeights::~CallWeights() {
    for (Request &r : requests_) {
        if (r.hold == Hold::kPin) cache_->unpin(r.handle.entry);
        if (r.hold == Hold::kClaim) cache_->abandon(r.handle.entry);
    }
    requests_.clear();
}

void CallWeights::need(const CpuProjectionV2 &p, int32_t expert, const char *name, const uint8_t **dst) {
    Request r{&p, expert, name, dst, {}, {}, Hold::kNothing, 0};
    requests_.push_back(r);
}

void CallWeights::rethrow_for(const Request &r, const Error &e) {
    const std::string expert = r.expert < 0 ? "expert" : "expert " + std::to_string(r.expert);
    fail(e.status(), expert + " " + r.name + ": " + e.what());
}

void CallWeights::identify_all() {
    // One fstat per distinct fd per call: a call's projections mostly share one file.
    for (size_t i = 0; i < requests_.size(); ++i) {
        Request &r = requests_[i];
        size_t same = 0;
        while (same < i && requests_[same].p->file_fd != r.p->file_fd) ++same;
        try {
            r.key.file = same < i ? requests_[same].key.file
                                  : identify_file(r.p->file_fd, r.p->file_offset, r.p->byte_len);
        } catch (const Error &e) {
            rethrow_for(r, e);
        }
        r.key.offset = r.p->file_offset;
        r.key.length = r.p->byte_len;
    }
}

void CallWeights::read(Request &r, uint8_t *dst) {
    try {
        counted_read(r.p->file_fd, r.p->file_offset, r.p->byte_len, dst);
    } catch (const Error &e) {
        rethrow_for(r, e);
    }
    stats().cache_misses.fetch_add(1, std::memory_order_relaxed);
    *r.dst = dst;
}

void CallWeights::resolve() {
    if (requests_.empty()) return;
    identify_all();
    std::vector<Request *> round;
    for (Request &r : requests_) round.push_back(&r);
    AlignedBuffer *buffer = &stream_;
    // Usually one round. A request whose reader (another call, or the prefetch worker) failed
    // goes round again and is read by this call, into a buffer of its own if it must stream.
    while (!round.empty()) {
        size_t stream_bytes = 0;
        for (Request *r : round) {
            r->handle = cache_ ? cache_->acquire(r->key) : WeightCache::Handle{};
            switch (r->handle.outcome) {
            case WeightCache::Outcome::kReady:
                r->hold = Hold::kPin;
                *r->dst = r->handle.data;
                stats().cache_hits.fetch_add(1, std::memory_order_relaxed);
                break;
            case WeightCache::Outcome::kInFlight: r->hold = Hold::kPin; break;
            case WeightCache::Outcome::kClaimed: r->hold = Hold::kClaim; break;
            case WeightCache::Outcome::kUncached:
                r->stream_offset = stream_bytes;
                // Validation bounds each byte_len, not their sum: a sum past 2^64 would wrap to
                // a small buffer the reads then overrun. No such memory exists anyway.
                if (r->p->byte_len > SIZE_MAX - 63 || __builtin_add_overflow(stream_bytes, padded(r->p->byte_len), &stream_bytes))
                    fail(MEMRA_STATUS_OUT_OF_MEMORY, "out of memory: the file weights this call reads uncached exceed the address space");
                break;
            }
        }
        uint8_t *stream_base = stream_bytes ? stream_memory(*buffer, stream_bytes) : nullptr;
        // This call's own reads first, then the waits: two calls each waiting on the other's
        // claim cannot happen, as every claim is filled before its holder waits.
        for (Request *r : round) {
            if (r->handle.outcome == WeightCache::Outcome::kUncached) read(*r, stream_base + r->stream_offset);
            if (r->handle.outcome != WeightCache::Outcome::kClaimed) continue;
            read(*r, r->handle.data);
            cache_->publish(r->handle.entry);
            r->hold = Hold::kPin;
        }
        std::vector<Request *> again;
        for (Request *r : round) {
            if (r->handle.outcome != WeightCache::Outcome::kInFlight) continue;
            uint8_t *data = nullptr;
            if (cache_->wait(r->handle.entry, &data)) {
                *r->dst = data;
                stats().cache_hits.fetch_add(1, std::memory_order_relaxed);
            } else {
                r->hold = Hold::kNothing;  // the failed entry's pin went with it
                again.push_back(r);
            }
        }
        round.swap(again);
        if (!round.empty()) {
            retry_buffers_.push_back(std::make_unique<AlignedBuffer>());
            buffer = retry_buffers_.back().get();
        }
    }
}

}  // namespace memra
