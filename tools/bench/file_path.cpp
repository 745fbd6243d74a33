// The file path of paths.h. The library caches what it read, keyed by file and region, so a
// "cold" call must use regions this process has not read yet: the stored experts are split into
// windows of `experts`, and cold and prefetched calls each take a window never used before (when
// the library turns out not to cache, windows are reused freely, the page cache being dropped
// before every cold call anyway). Warm calls then rotate over all windows, so that they read as
// many distinct bytes as the memory path does, alternating with memory-path calls on the same
// experts. First-pass calls also take unread windows, with
// the file in the page cache, next to a pread of the same bytes from the page cache and next to the
// machine's first-touch rate of fresh memory (4 KiB and huge pages), all measured in the same run.
#include <chrono>
#include <random>

#include "first_touch.h"
#include "paths.h"
#include "synthetic_weights.h"
#include "test_file.h"

namespace memra::bench {
namespace {

double elapsed(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class FilePathBench {
public:
    FilePathBench(const PathContext &ctx, const WeightStore &store)
        : ctx_(ctx), store_(store),
          file_(ctx.options.dir, ctx.backend + "-" + ctx.format, store.data(), store.size()),
          per_call_(ctx.options.experts), windows_(std::max(1, store.count() / per_call_)) {
        std::mt19937_64 rng(ctx.options.seed + 13);
        input_ = expertkit::random_input(ctx.options.shape.n_embd, rng);
        output_.resize(input_.size());
    }

    size_t call_bytes() const { return size_t(per_call_) * store_.expert_bytes(); }
    bool droppable() const { return file_.droppable(); }

    // Raw pread of one window's projections (one request each), from a dropped page cache.
    Summary time_pread() {
        std::vector<uint8_t> dst(call_bytes());
        int64_t w = 0;
        return sample_until_stable(ctx_.rule, [&] {
            const std::vector<CpuExpertV2> experts = window(w++ % windows_);
            drop_page_cache(file_.fd());
            const auto t0 = std::chrono::steady_clock::now();
            uint8_t *at = dst.data();
            for (const CpuExpertV2 &e : experts)
                for (const CpuProjectionV2 *p : {&e.gate, &e.up, &e.down}) {
                    pread_exact(file_.fd(), at, p->byte_len, p->file_offset);
                    at += p->byte_len;
                }
            return elapsed(t0);
        });
    }

    // pread of one window's projections already in the page cache (read once just before,
    // untimed): the ceiling of a first pass.
    Summary time_pread_cached() {
        std::vector<uint8_t> dst(call_bytes());
        int64_t w = 0;
        return sample_until_stable(ctx_.rule, [&] {
            const std::vector<CpuExpertV2> experts = window(w++ % windows_);
            read_window(experts, dst.data());
            const auto t0 = std::chrono::steady_clock::now();
            read_window(experts, dst.data());
            return elapsed(t0);
        });
    }

    // Token calls on windows the library has not read, from the page cache (each window read
    // once just before, untimed): an engine's first pass over a model the page cache holds. With
    // a budget smaller than the stored experts the cache is full and recycles its chunks: the
    // steady state of a model larger than the cache.
    // Just before each call, one call's bytes of fresh memory are touched (huge pages, kept):
    // `touches` gets those times, the first pass's ceiling drawn from the same free memory.
    Summary time_first_pass(int32_t threads, int samples, FreshMemory &fresh, std::vector<double> &touches) {
        std::vector<uint8_t> dst(call_bytes());
        std::vector<double> s;
        for (int i = 0; i < samples; ++i) {
            const std::vector<CpuExpertV2> experts = window(fresh_window());
            read_window(experts, dst.data());
            touches.push_back(fresh.touch(call_bytes(), true));
            s.push_back(timed_token(experts, threads));
        }
        return summarize(s);
    }

    // Token calls on windows the library has not read, the page cache dropped before each.
    Summary time_cold(int32_t threads, int samples) {
        std::vector<double> s;
        for (int i = 0; i < samples; ++i) {
            const int32_t w = fresh_window();
            drop_page_cache(file_.fd());
            s.push_back(timed_token(window(w), threads));
        }
        return summarize(s);
    }

    // A sequence of token calls on unread windows; during call k the next window is prefetched.
    Summary time_prefetched(int32_t threads, int samples) {
        std::vector<int32_t> ws;
        for (int i = 0; i < samples; ++i) ws.push_back(fresh_window());
        drop_page_cache(file_.fd());
        ctx_.library.prefetch(projections(window(ws[0])));
        std::vector<double> s;
        for (size_t k = 0; k < ws.size(); ++k) {
            const auto t0 = std::chrono::steady_clock::now();
            if (k + 1 < ws.size()) ctx_.library.prefetch(projections(window(ws[k + 1])));
            ctx_.library.token(window(ws[k]), input_.data(), output_.data(), threads);
            s.push_back(elapsed(t0));
        }
        return summarize(s);
    }

    // Every window read once (untimed), then calls rotating over all of them, each file-backed
    // call followed by a call on the same experts from the caller's memory (the store the file was
    // written from), rep by rep: the warm file path and the memory path measured alike, in one
    // process, under the same load. Measured in separate phases, the two figures differed by the
    // machine's drift between the phases (0.63 on the shared development VM where alternating
    // calls measure 0.99-1.02, docs/file-weights.md). [0]: file, [1]: memory.
    std::vector<Summary> time_warm(int32_t threads, std::string &note) {
        for (int32_t w = 0; w < windows_; ++w) timed_token(window(w), threads);
        timed_token(memory_window(0), threads);
        const CacheCounters before = ctx_.library.cache();
        int64_t w = 0;
        const std::vector<Summary> s = sample_alternating(
            ctx_.rule,
            {[&] { return timed_token(window(int32_t(w % windows_)), threads); },
             [&] { return timed_token(memory_window(int32_t(w++ % windows_)), threads); }},
            nullptr);
        const CacheCounters after = ctx_.library.cache();
        note = "library cache hits " + std::to_string(after.hits - before.hits) + ", misses " +
               std::to_string(after.misses - before.misses) + ", read " +
               std::to_string(after.read_bytes - before.read_bytes) + " bytes";
        return s;
    }

    // Samples a cold or prefetched measurement can have: all unread windows shared out, or as many
    // as asked when windows can be reused.
    int samples_per_measurement(int measurements) {
        if (!caches()) return ctx_.rule.min_reps;
        return std::max(1, (windows_ - next_fresh_) / measurements);
    }
    bool reused_windows() const { return reused_; }

private:
    std::vector<CpuExpertV2> window(int32_t w) const {
        std::vector<CpuExpertV2> experts;
        for (int32_t i = 0; i < per_call_; ++i)
            experts.push_back(store_.file_expert((w * per_call_ + i) % store_.count(), file_.fd(),
                                                 1.0f / float(per_call_)));
        return experts;
    }
    // Window w's experts from the caller's memory: the same bytes the file holds.
    std::vector<CpuExpertV2> memory_window(int32_t w) const {
        std::vector<CpuExpertV2> experts;
        for (int32_t i = 0; i < per_call_; ++i)
            experts.push_back(store_.memory_expert((w * per_call_ + i) % store_.count(), 1.0f / float(per_call_)));
        return experts;
    }
    void read_window(const std::vector<CpuExpertV2> &experts, uint8_t *at) const {
        for (const CpuExpertV2 &e : experts)
            for (const CpuProjectionV2 *p : {&e.gate, &e.up, &e.down}) {
                pread_exact(file_.fd(), at, p->byte_len, p->file_offset);
                at += p->byte_len;
            }
    }
    static std::vector<CpuProjectionV2> projections(const std::vector<CpuExpertV2> &experts) {
        std::vector<CpuProjectionV2> out;
        for (const CpuExpertV2 &e : experts) out.insert(out.end(), {e.gate, e.up, e.down});
        return out;
    }
    double timed_token(const std::vector<CpuExpertV2> &experts, int32_t threads) {
        const auto t0 = std::chrono::steady_clock::now();
        ctx_.library.token(experts, input_.data(), output_.data(), threads);
        return elapsed(t0);
    }
    // Whether the library keeps what it read (its miss counter moves on a file-backed call):
    // probed once, on window 0, which is then no longer fresh.
    bool caches() {
        if (probed_) return caches_;
        const CacheCounters before = ctx_.library.cache();
        timed_token(window(0), 1);
        caches_ = ctx_.library.cache().misses != before.misses;
        probed_ = true;
        next_fresh_ = std::max(next_fresh_, 1);
        return caches_;
    }
    int32_t fresh_window() {
        if (!caches()) return next_fresh_++ % windows_;
        if (next_fresh_ < windows_) return next_fresh_++;
        reused_ = true;
        return next_fresh_++ % windows_;
    }

    const PathContext &ctx_;
    const WeightStore &store_;
    TestFile file_;
    int32_t per_call_;
    int32_t windows_;
    int32_t next_fresh_ = 0;
    bool probed_ = false, caches_ = false, reused_ = false;
    std::vector<float> input_, output_;
};

}  // namespace

std::vector<Record> file_path(const PathContext &ctx, const WeightStore &store) {
    FilePathBench bench(ctx, store);
    auto make = [&](const char *variant, int32_t threads, const Summary &s) {
        Record r;
        r.mode = "file";
        r.variant = variant;
        r.backend = ctx.backend;
        r.served_by = ctx.served_by;
        r.format = ctx.format;
        r.threads = threads;
        r.experts = ctx.options.experts;
        r.bytes = bench.call_bytes();
        r.seconds = s;
        r.stored = ctx.stored;
        if (!bench.droppable()) r.note = "tmpfs: the page cache cannot be dropped, cold is not cold";
        return r;
    };
    const Record pread = make("pread", 1, bench.time_pread());
    const Record pread_cached = make("pread-cached", 1, bench.time_pread_cached());
    std::vector<Record> cold, prefetched, first;
    const int measurements = 3 * int(ctx.options.threads.size());
    const int samples = bench.samples_per_measurement(measurements);
    FreshMemory fresh;  // all of it kept until the file path's measurements are over
    std::vector<double> touch_huge_s, touch_4k_s;
    for (int32_t t : ctx.options.threads) {
        first.push_back(make("first-pass", t, bench.time_first_pass(t, samples, fresh, touch_huge_s)));
        first.back().relative_to = "pread-cached";
        first.back().relative = pread_cached.gbps() > 0 ? first.back().gbps() / pread_cached.gbps() : -1;
        cold.push_back(make("cold", t, bench.time_cold(t, samples)));
        prefetched.push_back(make("prefetched", t, bench.time_prefetched(t, samples)));
    }
    // Fresh memory of one call's size, faulted and written: what a first pass into a growing
    // cache cannot beat (first_touch.h). 4 KiB pages for comparison, after the rest.
    for (int i = 0; i < std::max(1, samples); ++i) touch_4k_s.push_back(fresh.touch(bench.call_bytes(), false));
    Record touch_huge = make("first-touch", 1, summarize(touch_huge_s));
    Record touch_4k = make("first-touch-4k", 1, summarize(touch_4k_s));
    touch_huge.note = "fresh anonymous memory, MADV_HUGEPAGE, written once, kept; one just before each first-pass call";
    touch_4k.note = "fresh anonymous memory, MADV_NOHUGEPAGE, written once, kept";
    std::vector<Record> out{pread, pread_cached, touch_huge, touch_4k};
    out.insert(out.end(), first.begin(), first.end());
    for (size_t i = 0; i < ctx.options.threads.size(); ++i) {
        const int32_t t = ctx.options.threads[i];
        std::string note;
        const std::vector<Summary> warm_s = bench.time_warm(t, note);
        Record warm = make("warm", t, warm_s[0]);
        Record memory = make("memory", t, warm_s[1]);
        warm.note += (warm.note.empty() ? "" : "; ") + note;
        memory.note = "the same experts from the caller's memory, calls alternating with warm's";
        if (memory.gbps() > 0) {
            warm.relative_to = "memory";
            warm.relative = warm.gbps() / memory.gbps();
        }
        Record &c = cold[i];
        Record &p = prefetched[i];
        c.exposed_wait_s = std::max(0.0, c.seconds.median - warm.seconds.median);
        p.exposed_wait_s = std::max(0.0, p.seconds.median - warm.seconds.median);
        c.relative_to = "pread";
        c.relative = pread.gbps() > 0 ? c.gbps() / pread.gbps() : -1;
        if (c.exposed_wait_s > 0) {
            p.relative_to = "cold";
            p.relative = p.exposed_wait_s / c.exposed_wait_s;
        }
        if (bench.reused_windows()) {
            c.note += (c.note.empty() ? "" : "; ") + std::string("windows reused: more --stored for truly cold calls");
            p.note = c.note;
        }
        out.insert(out.end(), {c, p, warm, memory});
    }
    return out;
}

}  // namespace memra::bench
