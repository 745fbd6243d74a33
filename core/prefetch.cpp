#include "prefetch.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "error.h"
#include "io.h"
#include "stats.h"
#include "weight_source.h"

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

Prefetcher *g_prefetcher = nullptr;  // set once instance() ran

// At unload or exit: stop the worker without waiting long for a read it may be in.
__attribute__((destructor)) void stop_prefetcher() {
    if (g_prefetcher) g_prefetcher->stop(100);
}

}  // namespace

Prefetcher &Prefetcher::instance() {
    static Prefetcher *p = g_prefetcher = new Prefetcher(WeightCache::instance());
    return *p;
}

void Prefetcher::enqueue(const CpuProjectionV2 *projections, int32_t count) {
    Stats &s = stats();
    struct Wanted {
        const CpuProjectionV2 *p;
        CacheKey key;
    };
    std::vector<Wanted> wanted;
    for (int32_t i = 0; i < count; ++i) {
        const CpuProjectionV2 &p = projections[i];
        if (p.file_fd < 0) continue;
        CacheKey key;
        try {
            key.file = identify_file(p.file_fd, p.file_offset, p.byte_len);
        } catch (const Error &e) {
            fail(e.status(), "projection " + std::to_string(i) + ": " + e.what());
        }
        key.offset = p.file_offset;
        key.length = p.byte_len;
        if (cache_.budget() == 0 || cache_.contains(key))
            s.prefetch_skipped.fetch_add(1, std::memory_order_relaxed);
        else
            wanted.push_back({&p, key});
    }
    if (wanted.empty()) return;

    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    for (const Wanted &w : wanted) {
        if (queue_.size() >= kQueueCapacity) {
            s.prefetch_dropped.fetch_add(1, std::memory_order_relaxed);
            continue;
        }
        // Out of descriptors or of memory: a hint not taken, like a full queue (and no
        // duplicate left open without a job to close it).
        auto it = files_.find(file_key(w.key.file));
        if (it == files_.end()) {
            const int fd = ::fcntl(w.p->file_fd, F_DUPFD_CLOEXEC, 0);
            if (fd < 0) {
                s.prefetch_dropped.fetch_add(1, std::memory_order_relaxed);
                continue;
            }
            try {
                it = files_.emplace(file_key(w.key.file), OpenFile{fd, 0}).first;
            } catch (const std::bad_alloc &) {
                ::close(fd);
                s.prefetch_dropped.fetch_add(1, std::memory_order_relaxed);
                continue;
            }
        }
        try {
            queue_.push_back({w.key, it->second.fd});
        } catch (const std::bad_alloc &) {
            if (it->second.jobs == 0) {
                ::close(it->second.fd);
                files_.erase(it);
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
    if (started_) return;
    started_ = true;
    keep_library_loaded();
    // The worker takes none of the process's signals: they stay with the engine's threads.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    try {
        std::thread(&Prefetcher::run, this).detach();
    } catch (...) {
        pthread_sigmask(SIG_SETMASK, &old, nullptr);
        started_ = false;
        throw;
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void Prefetcher::finish(const Job &job) {
    auto it = files_.find(file_key(job.key.file));
    if (--it->second.jobs == 0) {
        ::close(it->second.fd);
        files_.erase(it);
    }
}

void Prefetcher::read_into_cache(const Job &job) {
    Stats &s = stats();
    const WeightCache::Handle h = cache_.acquire(job.key);
    switch (h.outcome) {
    case WeightCache::Outcome::kClaimed:
        try {
            counted_read(job.fd, job.key.offset, job.key.length, h.data);
        } catch (...) {
            // The compute call that needs these bytes reads them and reports the error.
            cache_.abandon(h.entry);
            throw;
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
