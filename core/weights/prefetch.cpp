#include "weights/prefetch.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "compute/call_plan.h"
#include "compute/team_layout.h"
#include "error.h"
#include "numa/placement.h"
#include "weights/io.h"
#include "weights/repack.h"
#include "signals_blocked.h"
#include "stats.h"
#include "weights/weight_source.h"

namespace memra {
namespace {

std::array<uint64_t, 4> file_key(const FileIdentity &f) {
    return {f.dev, f.ino, f.size, uint64_t(f.mtime_ns)};
}

// Once a detached worker runs code of this library, the library must never be unmapped under it:
// a dlclose would otherwise return the worker into unmapped code. Marking the library's own
// handle RTLD_NODELETE keeps it loaded until the process exits.
void keep_library_loaded() {
    Dl_info info;
    if (::dladdr(reinterpret_cast<void *>(&keep_library_loaded), &info) && info.dli_fname)
        (void)::dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

}  // namespace

void Prefetcher::before_fork() { mutex_.lock(); }

void Prefetcher::after_fork_in_parent() { mutex_.unlock(); }

void Prefetcher::after_fork_in_child() {
    mutex_.unlock();  // taken by before_fork, in this very thread
    new (&changed_) std::condition_variable;  // its waiter, the worker, is not in this process
    for (const auto &[identity, file] : files_) ::close(file.fd);
    files_.clear();
    queue_.clear();
    started_ = exited_ = false;
}

void Prefetcher::enqueue(const CpuProjectionV2 *projections, int32_t count) {
    Stats &s = stats();
    // Each distinct fd of the call is duplicated first and identified through the duplicate, which
    // the worker then reads: the bytes come from the file the key names even when the caller puts
    // another file on its number meanwhile (dup2) or closes it.
    struct Source {
        int caller_fd;
        int fd;  // the duplicate, -1 when none could be had (the descriptor limit)
        FileIdentity id;
        bool adopted;  // handed to files_ (else closed when this call returns)
    };
    std::vector<Source> sources;
    struct CloseUnadopted {
        std::vector<Source> &sources;
        ~CloseUnadopted() {
            for (const Source &src : sources)
                if (src.fd >= 0 && !src.adopted) ::close(src.fd);
        }
    } close_unadopted{sources};
    struct Wanted {
        size_t source;
        CacheKey key;
        const memra_kernel_v2 *kernel;
        const CpuProjectionV2 *projection;
    };
    std::vector<Wanted> wanted;
    for (int32_t i = 0; i < count; ++i) {
        const CpuProjectionV2 &p = projections[i];
        if (p.file_fd < 0) continue;
        size_t k = 0;
        while (k < sources.size() && sources[k].caller_fd != p.file_fd) ++k;
        if (k == sources.size()) {
            sources.reserve(sources.size() + 1);  // before the duplicate exists: push_back cannot throw
            const int fd = reading_descriptor(p.file_fd, direct_io_);
            const int err = errno;
            sources.push_back({p.file_fd, fd, {}, false});
            try {
                if (fd < 0 && err == EBADF)
                    fail_read(p.file_fd, p.file_offset, p.byte_len, std::strerror(err));
                if (fd >= 0) sources.back().id = identify_file(fd, p.file_offset, p.byte_len, p.file_fd);
            } catch (const Error &e) {
                fail(e.status(), "projection " + std::to_string(i) + ": " + e.what());
            }
        }
        const Source &src = sources[k];
        if (src.fd < 0) {  // out of descriptors: a hint not taken
            s.prefetch_dropped.fetch_add(1, std::memory_order_relaxed);
            continue;
        }
        // Under the layout the calls will look for (a repacked entry is a different key).
        const memra_kernel_v2 *kernel = kernel_for_ ? kernel_for_(p.qtype) : nullptr;
        const CacheKey key{src.id, p.file_offset, p.byte_len, layout_of(kernel)};
        if (cache_.budget() == 0 || cache_.contains(key))
            s.prefetch_skipped.fetch_add(1, std::memory_order_relaxed);
        else
            wanted.push_back({k, key, kernel, &p});
    }
    if (wanted.empty()) return;
    std::shared_ptr<const PrefetchPlacement> placement;
    try {
        if (placement_for_) placement = placement_for_();
    } catch (const std::bad_alloc &) {
        // Out of memory: the entries are not placed (only speed depends on it).
    }

    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    for (const Wanted &w : wanted) {
        if (queue_.size() >= kQueueCapacity) {
            s.prefetch_dropped.fetch_add(1, std::memory_order_relaxed);
            continue;
        }
        // Out of memory: a hint not taken, like a full queue (and no duplicate left open without
        // a job to close it). A file already open for the worker (the same identity, through
        // another duplicate) is shared.
        Source &src = sources[w.source];
        auto it = files_.find(file_key(w.key.file));
        if (it == files_.end()) {
            try {
                it = files_.emplace(file_key(w.key.file), OpenFile{src.fd, 0}).first;
            } catch (const std::bad_alloc &) {
                s.prefetch_dropped.fetch_add(1, std::memory_order_relaxed);
                continue;
            }
            src.adopted = true;
        }
        try {
            const CpuProjectionV2 &p = *w.projection;
            queue_.push_back({w.key, it->second.fd, w.kernel, p.row_bytes, p.out_features, p.in_features, placement});
        } catch (const std::bad_alloc &) {
            if (it->second.jobs == 0) {  // made just now, for this source
                files_.erase(it);
                src.adopted = false;
            }
            s.prefetch_dropped.fetch_add(1, std::memory_order_relaxed);
            continue;
        }
        ++it->second.jobs;
        s.prefetch_queued.fetch_add(1, std::memory_order_relaxed);
    }
    start_locked();
    changed_.notify_all();
}

void Prefetcher::start_locked() {
    if (started_ || queue_.empty()) return;
    keep_library_loaded();
    AllSignalsBlocked blocked;  // the worker takes none of the process's signals
    try {
        std::thread(&Prefetcher::run, this).detach();
        started_ = true;
    } catch (...) {
        // No thread to be had (an address-space or thread limit): the hints are not taken; the
        // next prefetch tries again.
        stats().prefetch_dropped.fetch_add(queue_.size(), std::memory_order_relaxed);
        for (const Job &job : queue_) finish(job);
        queue_.clear();
    }
}

void Prefetcher::finish(const Job &job) {
    auto it = files_.find(file_key(job.key.file));
    if (--it->second.jobs == 0) {
        ::close(it->second.fd);
        files_.erase(it);
    }
}

void Prefetcher::place(const Job &job, const WeightCache::Handle &claim) {
    const PrefetchPlacement &p = *job.placement;
    uint64_t on_node[kMaxPlacedNodes] = {};
    int32_t bounds[kMaxTeamGroups + 1];
    if (p.groups > 1)
        split_rows(job.rows, tile_row_multiple(job.kernel, job.kernel), p.members.data(), p.groups, bounds);
    place_matrix(*p.machine, claim.data, SlabPool::chunk_bytes(job.key.length), job.row_bytes, bounds, p.nodes.data(),
                 p.groups, p.home_node, on_node, p.log);
    cache_.placed(claim.entry, on_node);
}

void Prefetcher::read_into_cache(const Job &job) {
    Stats &s = stats();
    // The file must still be the version the job was queued for, looked at once it is settled
    // (waiting a moment for a file modified in the current tick), so that a change during the
    // read shows afterwards (io.h, FileSnapshot); else nothing is read (counted failed: the
    // compute call that needs the bytes reads them).
    const FileSnapshot before = settled_snapshot(job.fd, job.key.offset, job.key.length, job.fd);
    if (!(before.id == job.key.file)) {
        s.prefetch_failed.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    const WeightCache::Handle h = cache_.acquire(job.key);
    switch (h.outcome) {
    case WeightCache::Outcome::kClaimed:
        if (job.placement) place(job, h);
        try {
            counted_read(job.fd, job.key.offset, job.key.length, h.data);
        } catch (...) {
            // The compute call that needs these bytes reads them and reports the error.
            cache_.abandon(h.entry);
            throw;
        }
        if (!unchanged_since(job.fd, before)) {  // changed during the read: not these bytes
            cache_.abandon(h.entry);
            s.prefetch_failed.fetch_add(1, std::memory_order_relaxed);
            break;
        }
        // Into the layout of the key before the entry is published (no repack buffer: the hint
        // is not taken, and the call that needs the bytes reads them and reports the error).
        if (needs_repack(job.kernel)) {
            try {
                repack_in_place(*job.kernel, h.data, job.row_bytes, job.rows, job.n);
            } catch (...) {
                cache_.abandon(h.entry);
                throw;
            }
        }
        cache_.publish(h.entry);
        cache_.unpin(h.entry);
        break;
    case WeightCache::Outcome::kReady:
    case WeightCache::Outcome::kInFlight:
        cache_.unpin(h.entry);
        s.prefetch_skipped.fetch_add(1, std::memory_order_relaxed);
        break;
    case WeightCache::Outcome::kUncached:  // no room without evicting what calls are using
        s.prefetch_skipped.fetch_add(1, std::memory_order_relaxed);
        break;
    }
}

void Prefetcher::run() {
    Stats &s = stats();
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (stopping_) break;
        const Job job = queue_.front();
        queue_.pop_front();
        lock.unlock();
        // Nothing may leave this thread: an exception escaping it would terminate the engine.
        try {
            read_into_cache(job);
        } catch (...) {
            s.prefetch_failed.fetch_add(1, std::memory_order_relaxed);
        }
        lock.lock();
        finish(job);
    }
    for (const Job &job : queue_) finish(job);
    queue_.clear();
    exited_ = true;
    changed_.notify_all();
}

void Prefetcher::stop(int patience_ms) {
    std::unique_lock<std::mutex> lock(mutex_);
    stopping_ = true;
    changed_.notify_all();
    if (started_)
        changed_.wait_for(lock, std::chrono::milliseconds(patience_ms), [this] { return exited_; });
}

}  // namespace memra
