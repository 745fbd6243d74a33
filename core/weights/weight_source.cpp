#include "weights/weight_source.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>

#include "compute/team_layout.h"
#include "numa/placement.h"
#include "weights/io.h"
#include "weights/repack.h"
#include "stats.h"

namespace memra {
namespace {

size_t padded(size_t bytes) { return (bytes + 63) & ~size_t{63}; }

// Memory for what this call reads uncached (the cache had no room, or could not grow). Refused,
// it is status 4 with the amount, rather than the bare "out of memory" of the C boundary.
uint8_t *stream_memory(AlignedBuffer &buffer, size_t bytes) {
    // Above 2^63 no such memory exists (the address space is 2^47 or 2^56 bytes), and
    // AlignedBuffer's rounding up would wrap near 2^64.
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

int reading_descriptor(int caller_fd, bool direct_io) {
    const int fd = ::fcntl(caller_fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0 || !direct_io) return fd;
    const int direct = reopen_direct(fd);
    if (direct < 0) return fd;  // buffered, through the duplicate
    ::close(fd);
    return direct;
}

void counted_read(int fd, uint64_t offset, size_t length, uint8_t *dst, int named_fd) {
    StopWatch io;
    read_exact(fd, offset, length, dst, named_fd);
    io.lap_into(stats().io_ns);
    stats().read_bytes.fetch_add(length, std::memory_order_relaxed);
}

std::vector<CallWeights::Request> &CallWeights::thread_requests() {
    // Calls do not nest on a thread, so one CallWeights at a time uses this thread's vectors.
    thread_local std::vector<Request> requests;
    return requests;
}

std::vector<CallWeights::OpenFile> &CallWeights::thread_files() {
    thread_local std::vector<OpenFile> files;
    return files;
}

CallWeights::CallWeights(AlignedBuffer &stream, WeightCache *cache, bool direct_io)
    : stream_(stream),
      cache_(cache && cache->budget() > 0 ? cache : nullptr),
      direct_io_(direct_io),
      requests_(thread_requests()),
      files_(thread_files()) {
    requests_.clear();
    files_.clear();
}

CallWeights::~CallWeights() {
    release_holds();
    close_files();
    requests_.clear();
}

void CallWeights::release_holds() noexcept {
    for (Request &r : requests_) {
        if (r.hold == Hold::kPin) cache_->unpin(r.handle.entry);
        if (r.hold == Hold::kClaim) cache_->abandon(r.handle.entry);
        r.hold = Hold::kNothing;
    }
}

void CallWeights::close_files() noexcept {
    for (const OpenFile &f : files_)
        if (f.owned) ::close(f.fd);
    files_.clear();
}

void CallWeights::need(const CpuProjectionV2 &p, int32_t expert, int32_t kind, const uint8_t **dst,
                       const memra_kernel_v2 *kernel) {
    Request r{&p, expert, kind, dst, kernel, 0, {}, {}, Hold::kNothing, 0, nullptr, 0, nullptr};
    requests_.push_back(r);
}

void CallWeights::need_plan(CallPlan &plan) {
    for (size_t i = 0; i < plan.experts.size(); ++i)
        for (int32_t k = 0; k < kProjectionKinds; ++k) {
            PlannedProjection &p = plan.experts[i].projection[k];
            if (p.source->file_fd < 0) continue;
            need(*p.source, plan.label_index(i), k, &p.weights, p.kernel);
            requests_.back().plan_expert = i;
        }
}

void CallWeights::resolve(CallPlan &plan) {
    need_plan(plan);
    resolve();
}

void CallWeights::rethrow_for(const Request &r, const Error &e) {
    fail(e.status(), expert_label(r.expert, projection_name(r.kind)) + ": " + e.what());
}

void CallWeights::open_files() {
    // One duplicate and one settled snapshot per distinct fd per call: a call's projections
    // mostly share one file.
    for (Request &r : requests_) {
        const int caller_fd = r.p->file_fd;
        size_t f = 0;
        while (f < files_.size() && files_[f].caller_fd != caller_fd) ++f;
        if (f == files_.size()) {
            files_.reserve(files_.size() + 1);  // before the duplicate exists: push_back cannot throw
            OpenFile file;
            file.caller_fd = caller_fd;
            file.fd = reading_descriptor(caller_fd, direct_io_);
            file.owned = file.fd >= 0;
            if (!file.owned) {
                const int err = errno;
                // A number that names no open file is the caller's error; anything else (the
                // descriptor limit) leaves the caller's own descriptor to read through.
                if (err == EBADF)
                    rethrow_for(r, Error(MEMRA_STATUS_IO_ERROR,
                                         read_failure(caller_fd, r.p->file_offset, r.p->byte_len, std::strerror(err))));
                file.fd = caller_fd;
            }
            files_.push_back(file);
            try {
                files_.back().snapshot = settled_snapshot(file.fd, r.p->file_offset, r.p->byte_len, caller_fd);
            } catch (const Error &e) {
                rethrow_for(r, e);
            }
        }
        r.file = f;
        r.key.file = files_[f].snapshot.id;
        r.key.offset = r.p->file_offset;
        r.key.length = r.p->byte_len;
        r.key.layout = layout_of(r.kernel);  // a repacked entry never meets ggml's bytes
    }
}

void CallWeights::read(Request &r, uint8_t *dst) {
    const OpenFile &f = files_[r.file];
    try {
        counted_read(f.fd, r.p->file_offset, r.p->byte_len, dst, f.caller_fd);
    } catch (const Error &e) {
        // A read that failed because the file changed under it (truncated, say) starts over too.
        if (e.status() == MEMRA_STATUS_IO_ERROR && !unchanged_since(f.fd, f.snapshot)) throw FileChanged{&r};
        rethrow_for(r, e);
    }
    if (!unchanged_since(f.fd, f.snapshot)) throw FileChanged{&r};
    // Repacked before a claim is published: an entry holds its key's layout from the start.
    if (needs_repack(r.kernel)) {
        try {
            repack_in_place(*r.kernel, dst, r.p->row_bytes, r.p->out_features, r.p->in_features);
        } catch (const Error &e) {
            rethrow_for(r, e);
        }
    }
    ++misses_;
    *r.dst = dst;
}

void CallWeights::resolve() { resolve_from(1); }

void CallWeights::resolve_from(int first_attempt) {
    if (requests_.empty()) return;
    for (int attempt = first_attempt;; ++attempt) {
        hits_ = misses_ = 0;
        try {
            open_files();
            resolve_once();
        } catch (const FileChanged &changed) {
            release_holds();
            close_files();
            if (attempt == 2) {
                const Request &r = *changed.request;
                rethrow_for(r, Error(MEMRA_STATUS_IO_ERROR, read_failure(r.p->file_fd, r.p->file_offset, r.p->byte_len,
                                                                         "file changed during read")));
            }
            continue;  // once more, from the file as it is now
        } catch (...) {
            stats().cache_hits.fetch_add(hits_, std::memory_order_relaxed);
            stats().cache_misses.fetch_add(misses_, std::memory_order_relaxed);
            throw;
        }
        stats().cache_hits.fetch_add(hits_, std::memory_order_relaxed);
        stats().cache_misses.fetch_add(misses_, std::memory_order_relaxed);
        close_files();  // everything is read: the duplicates are not needed any more
        return;
    }
}

void CallWeights::acquire_round(const std::vector<Request *> &round, AlignedBuffer &buffer) {
    size_t stream_bytes = 0;
    for (Request *r : round) {
        // Only what was read through the call's own duplicate is cached (claimed).
        r->handle = cache_ ? cache_->acquire(r->key, files_[r->file].owned) : WeightCache::Handle{};
        switch (r->handle.outcome) {
        case WeightCache::Outcome::kReady:
            r->hold = Hold::kPin;
            *r->dst = r->handle.data;
            ++hits_;
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
    uint8_t *stream_base = stream_bytes ? stream_memory(buffer, stream_bytes) : nullptr;
    for (Request *r : round)
        if (r->handle.outcome == WeightCache::Outcome::kUncached) r->stream = stream_base + r->stream_offset;
}

void CallWeights::fetch_own(Request &r) {
    // A claim is published only once the read is checked (read() throws otherwise, and the claim
    // is abandoned), so no entry ever holds bytes of another file than its key names.
    if (r.handle.outcome == WeightCache::Outcome::kUncached) read(r, r.stream);
    if (r.handle.outcome != WeightCache::Outcome::kClaimed) return;
    if (placement_) place_claim(r);
    read(r, r.handle.data);
    cache_->publish(r.handle.entry);
    r.hold = Hold::kPin;
}

void CallWeights::place_claim(const Request &r) {
    const ClaimPlacement &p = *placement_;
    uint64_t on_node[kMaxPlacedNodes] = {};
    int32_t bounds[kMaxTeamGroups + 1];
    if (p.groups > 1) group_row_bounds(*p.plan, r.plan_expert, r.kind, p.groups, bounds);
    place_matrix(*p.machine, r.handle.data, SlabPool::chunk_bytes(r.p->byte_len), r.p->row_bytes, bounds,
                 p.group_node, p.groups, p.home_node, on_node, p.log);
    cache_->placed(r.handle.entry, on_node);
}

bool CallWeights::wait_for_reader(Request &r) {
    uint8_t *data = nullptr;
    if (cache_->wait(r.handle.entry, &data)) {
        *r.dst = data;
        ++hits_;
        return true;
    }
    r.hold = Hold::kNothing;  // the failed entry's pin went with it
    return false;
}

void CallWeights::resolve_once() {
    std::vector<Request *> round;
    for (Request &r : requests_) round.push_back(&r);
    AlignedBuffer *buffer = &stream_;
    // Usually one round. A request whose reader (another call, or the prefetch worker) failed
    // goes round again and is read by this call, into a buffer of its own if it must stream.
    while (!round.empty()) {
        acquire_round(round, *buffer);
        // This call's own reads first, then the waits: two calls each waiting on the other's
        // claim cannot happen, as every claim is filled before its holder waits.
        for (Request *r : round) fetch_own(*r);
        std::vector<Request *> again;
        for (Request *r : round)
            if (r->handle.outcome == WeightCache::Outcome::kInFlight && !wait_for_reader(*r)) again.push_back(r);
        round.swap(again);
        if (!round.empty()) {
            retry_buffers_.push_back(std::make_unique<AlignedBuffer>());
            buffer = retry_buffers_.back().get();
        }
    }
}

}  // namespace memra
