#include "paths.h"

#include <chrono>
#include <random>

#include "synthetic_weights.h"

namespace memra::bench {
namespace {

double time_one(const std::function<void()> &call) {
    const auto t0 = std::chrono::steady_clock::now();
    call();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Record base_record(const PathContext &ctx, const char *mode, const char *variant, int32_t threads) {
    Record r;
    r.mode = mode;
    r.variant = variant;
    r.backend = ctx.backend;
    r.served_by = ctx.served_by;
    r.format = ctx.format;
    r.threads = threads;
    r.stored = ctx.stored;
    return r;
}

// The experts of token call k: a window of `count` consecutive stored experts that moves on by
// `count` each call, so an expert comes back only after all the others were read.
std::vector<CpuExpertV2> memory_window(const WeightStore &store, int64_t k, int32_t count) {
    std::vector<CpuExpertV2> experts;
    for (int32_t i = 0; i < count; ++i)
        experts.push_back(store.memory_expert(int32_t((k * count + i) % store.count()), 1.0f / float(count)));
    return experts;
}

size_t window_bytes(const WeightStore &store, int32_t count) { return size_t(count) * store.expert_bytes(); }

// One timed token call on window k of `count` experts (k then moves on): the token path's
// sample, and the rows path's denominator between its rows calls.
double time_token_window(const PathContext &ctx, const WeightStore &store, int64_t &k, int32_t count, int32_t threads,
                         const float *input, float *output) {
    const std::vector<CpuExpertV2> experts = memory_window(store, k++, count);
    return time_one([&] { ctx.library.token(experts, input, output, threads); });
}

// Times token calls on successive windows of `count` experts (one untimed call first).
Summary time_token_calls(const PathContext &ctx, const WeightStore &store, int32_t count, int32_t threads) {
    std::mt19937_64 rng(ctx.options.seed + 7);
    const std::vector<float> input = expertkit::random_input(ctx.options.shape.n_embd, rng);
    std::vector<float> output(input.size());
    int64_t k = 0;
    time_token_window(ctx, store, k, count, threads, input.data(), output.data());
    return sample_until_stable(
        ctx.rule, [&] { return time_token_window(ctx, store, k, count, threads, input.data(), output.data()); });
}

}  // namespace

std::vector<Record> token_path(const PathContext &ctx, const WeightStore &store) {
    std::vector<Record> out;
    const int32_t count = ctx.options.experts;
    for (int32_t t : ctx.options.threads) {
        Record r = base_record(ctx, "token", "memory", t);
        r.experts = count;
        r.bytes = window_bytes(store, count);
        r.seconds = time_token_calls(ctx, store, count, t);
        out.push_back(r);
    }
    return out;
}

// Each m's rows calls alternate rep by rep with token calls of one expert (sample_alternating),
// and the ratio is of those two medians: a token time taken once before them moved with the VM's
// state more than the rows times did (q4_0 m = 32 read 4.3 and 5.8 token calls an hour apart
// with the rows GB/s unchanged). The token record of the thread count stays a separate
// measurement, for its own GB/s.
std::vector<Record> rows_path(const PathContext &ctx, const WeightStore &store) {
    std::vector<Record> out;
    const int32_t n_embd = ctx.options.shape.n_embd;
    std::mt19937_64 rng(ctx.options.seed + 11);
    const std::vector<float> inputs = expertkit::random_input(64 * n_embd, rng);
    const std::vector<float> route_weights(64, 1.0f);
    std::vector<float> outputs(inputs.size());
    for (int32_t t : ctx.options.threads) {
        Record token = base_record(ctx, "rows", "token", t);
        token.experts = 1;
        token.bytes = store.expert_bytes();
        token.seconds = time_token_calls(ctx, store, 1, t);
        out.push_back(token);
        int64_t k = 0;  // the expert of the next call, token or rows: each follows the other
        auto token_call = [&] { return time_token_window(ctx, store, k, 1, t, inputs.data(), outputs.data()); };
        for (int32_t m : ctx.options.rows) {
            Record r = base_record(ctx, "rows", "rows", t);
            r.experts = 1;
            r.rows = m;
            r.bytes = store.expert_bytes();
            auto rows_call = [&] {
                const CpuExpertV2 expert = store.memory_expert(int32_t(k++ % store.count()), 1.0f);
                return time_one([&] {
                    ctx.library.rows(expert, inputs.data(), m, route_weights.data(), outputs.data(), t);
                });
            };
            rows_call();
            const std::vector<Summary> s = sample_alternating(ctx.rule, {token_call, rows_call}, nullptr);
            r.seconds = s[1];
            r.relative_to = "token";
            r.relative = s[0].median > 0 ? s[1].median / s[0].median : -1;
            out.push_back(r);
        }
    }
    return out;
}

}  // namespace memra::bench
