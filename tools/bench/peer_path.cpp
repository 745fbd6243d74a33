#include "peer_path.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>

#include "peer_compare.h"
#include "synthetic_weights.h"

namespace memra::bench {
namespace {

// The longest a turn waits for the previous contender's threads to go to sleep (memra's helpers
// and ggml's pool spin briefly after a call); after it the turn starts anyway.
constexpr double kMaxIdleWait = 0.05;

// The call on window (or expert) k, writing out; returns the seconds of the call itself (its
// arguments are built before the clock starts).
using Call = std::function<double(int64_t k, float *out)>;

struct Contender {
    std::string variant;  // memra | ggml | ggml_repack
    std::string served_by;
    std::string note;
    PeerCheck check;      // how its output is held to memra's (not used for memra)
    Call call;
    Call exact;           // ggml: the same call with the contract's silu (untimed check), else empty
};

double time_call(const std::function<void()> &call) {
    const auto t0 = std::chrono::steady_clock::now();
    call();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string milliseconds(double seconds) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f ms", seconds * 1e3);
    return buf;
}

struct Step {
    const char *mode;  // peer_token | peer_rows
    int32_t experts, rows;
    size_t bytes;      // weight bytes one call reads
    size_t out_len;    // floats one call writes
};

// One step at one thread count: the agreement check, then the alternating timed reps.
std::vector<Record> compare_step(const PathContext &ctx, const Step &step, int32_t threads,
                                 const std::vector<Contender> &contenders, const GgmlPeer &peer,
                                 std::vector<std::string> &problems) {
    const size_t n = contenders.size();
    std::vector<std::vector<float>> outs(n, std::vector<float>(step.out_len));
    // Call 0 of every contender: the same experts and inputs. Untimed (it also warms up).
    for (size_t i = 0; i < n; ++i) {
        contenders[i].call(0, outs[i].data());
        peer.pause();
        wait_for_idle_threads(kMaxIdleWait);
    }
    auto hold = [&](PeerCheck check, const OutputComparison &c) {
        const std::string problem = agreement_problem(ctx.format, step.mode, check, peer.avx2_kernels(), c);
        if (!problem.empty()) problems.push_back(std::string(step.mode) + " t=" + std::to_string(threads) + ": " + problem);
    };
    std::vector<OutputComparison> cmp(n), exact(n);
    for (size_t i = 1; i < n; ++i) {
        cmp[i] = compare_outputs(outs[0].data(), outs[i].data(), step.out_len);
        hold(contenders[i].check, cmp[i]);
        if (!contenders[i].exact) continue;
        std::vector<float> y(step.out_len);
        contenders[i].exact(0, y.data());
        peer.pause();
        wait_for_idle_threads(kMaxIdleWait);
        exact[i] = compare_outputs(outs[0].data(), y.data(), step.out_len);
        hold(PeerCheck::ExactSilu, exact[i]);
    }

    int64_t k = 1;  // shared by all contenders: each call reads the next window
    std::vector<std::vector<double>> waits(n);  // the idle gap after each contender's turns
    std::vector<std::function<double()>> timed;
    for (size_t i = 0; i < n; ++i)
        timed.push_back([&, i] { return contenders[i].call(k++, outs[i].data()); });
    const std::vector<Summary> s = sample_alternating(ctx.rule, timed, [&](size_t i) {
        if (i > 0) peer.pause();
        waits[i].push_back(wait_for_idle_threads(kMaxIdleWait));
    });

    std::string order, gaps;
    for (size_t i = 0; i < n; ++i) {
        order += (i ? ", " : "") + contenders[i].variant;
        gaps += std::string(i ? ", " : "") + contenders[i].variant + " " + milliseconds(quantile(waits[i], 0.5)) +
                " (max " + milliseconds(*std::max_element(waits[i].begin(), waits[i].end())) + ")";
    }
    const std::string gap = "reps alternate " + order + "; untimed wait for idle threads after each turn, median: " + gaps;
    std::vector<Record> out;
    for (size_t i = 0; i < n; ++i) {
        Record r;
        r.mode = step.mode;
        r.variant = contenders[i].variant;
        r.backend = ctx.backend;
        r.served_by = contenders[i].served_by;
        r.format = ctx.format;
        r.threads = threads;
        r.experts = step.experts;
        r.rows = step.rows;
        r.stored = ctx.stored;
        r.bytes = step.bytes;
        r.seconds = s[i];
        r.note = (contenders[i].note.empty() ? "" : contenders[i].note + "; ") + gap;
        if (i > 0) {
            r.output_rel_error = cmp[i].rel_error;
            r.output_identical = cmp[i].identical();
        }
        if (contenders[i].exact) {
            r.exact_silu_rel_error = exact[i].rel_error;
            r.exact_silu_identical = exact[i].identical();
        }
        out.push_back(r);
    }
    // memra / the faster ggml, and each ggml / memra.
    size_t best = 1;
    for (size_t i = 2; i < n; ++i)
        if (out[i].gbps() > out[best].gbps()) best = i;
    if (n > 1 && out[best].gbps() > 0) {
        out[0].relative_to = out[best].variant;
        out[0].relative = out[0].gbps() / out[best].gbps();
    }
    for (size_t i = 1; i < n && out[0].gbps() > 0; ++i) {
        out[i].relative_to = "memra";
        out[i].relative = out[i].gbps() / out[0].gbps();
    }
    return out;
}

}  // namespace

std::vector<Record> peer_paths(const PathContext &ctx, const WeightStore &store, const GgmlPeer &peer,
                               const std::string &repacked, std::vector<std::string> &problems) {
    const BenchOptions &o = ctx.options;
    const int32_t n_embd = o.shape.n_embd, count = o.experts, stored = store.count();
    std::mt19937_64 rng(o.seed + 13);
    const std::vector<float> input = expertkit::random_input(n_embd, rng);
    const std::vector<float> inputs = expertkit::random_input(kPeerRows * n_embd, rng);
    // Route weights as a router gives them: positive, the token's summing to 1.
    std::uniform_real_distribution<float> weight(0.05f, 1.0f);
    std::vector<float> token_weights(static_cast<size_t>(count)), row_weights(static_cast<size_t>(kPeerRows));
    for (float &w : token_weights) w = weight(rng);
    float sum = 0;
    for (float w : token_weights) sum += w;
    for (float &w : token_weights) w /= sum;
    for (float &w : row_weights) w = weight(rng);

    auto window = [&](int64_t k) {
        std::vector<int32_t> ids;
        for (int32_t i = 0; i < count; ++i) ids.push_back(int32_t((k * count + i) % stored));
        return ids;
    };
    const std::string ggml_by = "ggml-cpu-" + peer.variant();
    // ggml as shipped (with its exact-silu twin for the check), then repacked where it repacks.
    auto add_ggml = [&](std::vector<Contender> &c, const std::function<Call(int32_t)> &ggml) {
        c.push_back({"ggml", ggml_by, "", PeerCheck::Shipped, ggml(MEMRA_GGML_PEER_PLAIN),
                     ggml(MEMRA_GGML_PEER_PLAIN | MEMRA_GGML_PEER_EXACT_SILU)});
        if (peer.repacked())
            c.push_back({"ggml_repack", ggml_by, "repacked " + repacked, PeerCheck::Repacked,
                         ggml(MEMRA_GGML_PEER_REPACKED), {}});
    };

    std::vector<Record> out;
    for (int32_t t : o.threads) {
        if (o.has(Mode::Token)) {
            auto ggml = [&, t](int32_t layout) -> Call {
                return [&, t, layout](int64_t k, float *y) {
                    const std::vector<int32_t> ids = window(k);
                    return time_call([&] { peer.token(layout, ids, token_weights, input.data(), y, t); });
                };
            };
            std::vector<Contender> c{{"memra", ctx.served_by, "", PeerCheck::Shipped, [&, t](int64_t k, float *y) {
                                          std::vector<CpuExpertV2> experts;
                                          const std::vector<int32_t> ids = window(k);
                                          for (int32_t i = 0; i < count; ++i)
                                              experts.push_back(store.memory_expert(ids[size_t(i)], token_weights[size_t(i)]));
                                          return time_call([&] { ctx.library.token(experts, input.data(), y, t); });
                                      }, {}}};
            add_ggml(c, ggml);
            const Step step{"peer_token", count, 0, size_t(count) * store.expert_bytes(), size_t(n_embd)};
            for (Record &r : compare_step(ctx, step, t, c, peer, problems)) out.push_back(r);
        }
        if (o.has(Mode::Rows)) {
            auto ggml = [&, t](int32_t layout) -> Call {
                return [&, t, layout](int64_t k, float *y) {
                    const int32_t expert = int32_t(k % stored);
                    return time_call([&] { peer.rows(layout, expert, inputs.data(), kPeerRows, row_weights.data(), y, t); });
                };
            };
            std::vector<Contender> c{{"memra", ctx.served_by, "", PeerCheck::Shipped, [&, t](int64_t k, float *y) {
                                          const CpuExpertV2 expert = store.memory_expert(int32_t(k % stored), 1.0f);
                                          return time_call([&] {
                                              ctx.library.rows(expert, inputs.data(), kPeerRows, row_weights.data(), y, t);
                                          });
                                      }, {}}};
            add_ggml(c, ggml);
            const Step step{"peer_rows", 1, kPeerRows, store.expert_bytes(), size_t(kPeerRows) * size_t(n_embd)};
            for (Record &r : compare_step(ctx, step, t, c, peer, problems)) out.push_back(r);
        }
    }
    return out;
}

}  // namespace memra::bench
