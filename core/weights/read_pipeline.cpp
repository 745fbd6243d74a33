// CallWeights, pipelined (weight_source.h, begin .. finish): the reads of a call's file-backed
// projections run as items of the call's own team, between its tiles (compute/read_schedule.h),
// so that a projection's tiles start as soon as its bytes are in and the call takes about the
// longer of its reading and its computing rather than their sum. What may fail is decided as
// resolve() decides it: begin() throws what resolve() throws before its first read, and
// finish() throws the error of the earliest failed item (the one resolve(), reading in the same
// order, would have met first) or, for a file that changed or a reader that gave up, resolves
// again the way resolve() goes round again.
#include "weights/weight_source.h"

#include "stats.h"

namespace memra {

std::unique_ptr<std::atomic<int32_t>[]> &CallWeights::thread_states(size_t count) {
    // Kept by the thread like its requests: a call in steady state allocates nothing.
    thread_local std::unique_ptr<std::atomic<int32_t>[]> states;
    thread_local size_t capacity = 0;
    if (capacity < count) {
        states.reset(new std::atomic<int32_t>[count]);
        capacity = count;
    }
    return states;
}

void CallWeights::begin(CallPlan &plan) {
    pending_.clear();
    pending_reads_ = 0;
    failed_.store(false, std::memory_order_relaxed);
    failed_item_ = SIZE_MAX;
    failure_ = nullptr;
    reread_ = false;
    need_plan(plan);
    if (requests_.empty()) return;
    hits_ = misses_ = 0;
    try {
        open_files();
        std::vector<Request *> all;
        for (Request &r : requests_) all.push_back(&r);
        acquire_round(all, stream_);
        std::atomic<int32_t> *states = thread_states(requests_.size()).get();
        pending_.reserve(requests_.size());
        // The call's own reads first, in plan order, then its waits for other readers.
        for (int pass = 0; pass < 2; ++pass)
            for (size_t j = 0; j < requests_.size(); ++j) {
                Request &r = requests_[j];
                const bool waits = r.handle.outcome == WeightCache::Outcome::kInFlight;
                if (r.handle.outcome == WeightCache::Outcome::kReady || waits != (pass == 1)) continue;
                r.state = &states[j];
                r.state->store(kBytesPending, std::memory_order_relaxed);
                plan.experts[r.plan_expert].projection[r.kind].ready = r.state;
                pending_.push_back(&r);
            }
        for (const Request *r : pending_) pending_reads_ += r->handle.outcome != WeightCache::Outcome::kInFlight;
    } catch (...) {
        stats().cache_hits.fetch_add(hits_, std::memory_order_relaxed);
        stats().cache_misses.fetch_add(misses_, std::memory_order_relaxed);
        throw;
    }
}

size_t CallWeights::pending_plan_expert(size_t i) const { return pending_[i]->plan_expert; }

void CallWeights::keep_failure(size_t item, std::exception_ptr failure, bool reread) noexcept {
    std::lock_guard<std::mutex> lock(failure_mutex_);
    if (item < failed_item_) {
        failed_item_ = item;
        failure_ = failure;
        reread_ = reread;
    }
    failed_.store(true, std::memory_order_release);
}

void CallWeights::fetch(size_t i) noexcept {
    Request &r = *pending_[i];
    int32_t state = kBytesIn;
    {
        // After a failure, only the items before it still matter (one of them may fail first).
        std::lock_guard<std::mutex> lock(failure_mutex_);
        if (i > failed_item_) state = kReadFailed;
    }
    if (state == kBytesIn) {
        try {
            if (i < pending_reads_)
                fetch_own(r);
            else if (!wait_for_reader(r))
                throw Reread{};
        } catch (const Reread &) {
            keep_failure(i, nullptr, true);
            state = kReadFailed;
        } catch (const FileChanged &) {
            keep_failure(i, nullptr, false);
            state = kReadFailed;
        } catch (...) {
            keep_failure(i, std::current_exception(), false);
            state = kReadFailed;
        }
    }
    r.state->store(state, std::memory_order_release);
}

bool CallWeights::finish() {
    if (!failed()) {
        stats().cache_hits.fetch_add(hits_, std::memory_order_relaxed);
        stats().cache_misses.fetch_add(misses_, std::memory_order_relaxed);
        close_files();
        return true;
    }
    // Every item has run (the team has returned): nothing touches the requests any more.
    if (failure_) {
        stats().cache_hits.fetch_add(hits_, std::memory_order_relaxed);
        stats().cache_misses.fetch_add(misses_, std::memory_order_relaxed);
        std::rethrow_exception(failure_);
    }
    release_holds();
    close_files();
    // A file changed under a read: this was the call's first attempt, as in resolve(). A reader
    // that gave up: its entries are read by this call, as resolve()'s next round does.
    resolve_from(reread_ ? 1 : 2);
    for (Request &r : requests_)
        if (r.state) r.state->store(kBytesIn, std::memory_order_release);
    failed_.store(false, std::memory_order_release);
    return false;
}

}  // namespace memra
