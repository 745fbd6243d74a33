// Whole calls through the public ABI, against ggml's MoE graph on the same bytes: the library as
// the engine loads it (dlopen + dlsym, tools/common/abi_loader.h), its backend forced by
// MEMRA_CPU_EXPERT_BACKEND (ctest runs this binary once per plugin), and ggml's graph of llama.cpp's
// build_moe_ffn run by the peer module (tools/bench/peer) with the contract's silu
// (MEMRA_GGML_PEER_EXACT_SILU: ggml's own vectorised silu differs in the last bit of about a
// quarter of its values; everything else stays ggml's). For every format, two shapes, several
// experts and route weights, macro scales 1 and not 1 (ggml applies one scale per tensor, so all
// experts share them here; memra's per-expert scales are the conformance suite's to check):
//  - token calls (1, 3 and 6 of 6 experts) and rows calls (m = 1, 7, 8, 32, 64) of every
//    quantized format: within kQuantizedBound. memra's activation quantizers and decoders are
//    ggml's bit for bit (the decode and quantize tests), but its dots sum in the canonical order
//    v2 (formats spec §5.3: one fma per block), ggml's x86 vec_dot in eight lanes per block
//    (§5.2), so gate and up differ in the last bits (dot_test.cpp bounds each dot), and so do
//    ggml's own batched IQ rows (iqp.cpp, GGML_IQP_MIN_BATCH_ID, another float order again);
//  - F32: bit-identical with ggml's AVX-512 variant, whose order is memra's (truth_env.h), BF16
//    with its AVX512_BF16 variants (vdpbf16ps pairs, memra's order); with other variants: the
//    bounds below.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "formats.h"
#include "library.h"
#include "moe_layer.h"
#include "param_names.h"
#include "peer_compare.h"
#include "synthetic_weights.h"
#include "truth_env.h"

namespace memra::truth {
namespace {

constexpr int32_t kThreads = 2;      // memra's (its results do not depend on it)
constexpr int32_t kGgmlThreads = 1;  // nor do ggml's; one keeps its pool from competing with memra's
constexpr int32_t kExperts = 6;
constexpr int32_t kLayout = MEMRA_GGML_PEER_PLAIN | MEMRA_GGML_PEER_EXACT_SILU;

// Bounds on ||memra - ggml||_2 / ||ggml||_2 where the float order is not ggml's.
// F32 with a ggml variant without AVX-512 (32 lanes): dots differ in the last bits (each within
// 2 gamma_n S, dot_test.cpp); memra-bench measured up to 7e-7 with such a differing order
// (docs/benchmarks.md): 1e-5 leaves a margin and still fails any wrong weight, expert or scale.
constexpr double kF32Bound = 1e-5;
// BF16 with a variant without AVX512_BF16: x and h are rounded to bf16 on both sides; ggml sums in
// another order, so now and then an h value rounds to the neighbouring bf16 (a 2^-8 relative step of one of n_ff terms
// of a down dot): measured here up to 2.3e-5 (memra-bench: 7.7e-5); a wrong value is O(1).
constexpr double kBf16Bound = 1e-3;
// Quantized formats: gate/up differ from ggml's in the last bits (two float orders of the same
// exact block sums, each dot within a few ulps of its magnitude: dot_test.cpp); silu and the
// product keep that a relative 1e-6 or so, but h is requantized (Q8_0 / Q8_K), where a last-bit
// change can move a block's float scale (a relative 1e-7) or flip one code: one h value moves by
// one step, at most 1/127 of its block's largest value, so one flip moves ||out|| by at most
// about 1/127 of one block's share (memra-bench saw 8e-4 once in ggml's own batched IQ rows).
// 1e-2 covers a flip and still fails any wrong weight, block, expert or scale (an O(1) error).
constexpr double kQuantizedBound = 1e-2;

const std::string &backend() {
    static const std::string b = [] {
        const char *v = std::getenv("MEMRA_CPU_EXPERT_BACKEND");
        return std::string(v && *v ? v : "auto");
    }();
    return b;
}

bench::Library &library() {
    static bench::Library lib(MEMRA_LIBRARY_PATH);
    return lib;
}

std::string shape_name(int32_t n_embd, int32_t n_ff) { return std::to_string(n_embd) + "x" + std::to_string(n_ff); }

struct Checker {
    int32_t qtype;
    bool exact() const {
        if (qtype == MEMRA_QTYPE_F32) return ggml_f32_order_is_memras();
        if (qtype == MEMRA_QTYPE_BF16) return ggml_bf16_order_is_memras();
        return false;  // the canonical order v2 is not ggml's vec_dot order
    }
    double bound() const {
        if (qtype == MEMRA_QTYPE_F32) return kF32Bound;
        return qtype == MEMRA_QTYPE_BF16 ? kBf16Bound : kQuantizedBound;
    }

    // memra's output against ggml's: identical, or within the format's bound.
    void judge(const std::string &what, const std::vector<float> &ggml, const std::vector<float> &memra) const {
        const bench::OutputComparison c = bench::compare_outputs(ggml.data(), memra.data(), ggml.size());
        const bool identical = exact();
        const double bound = this->bound();
        if (std::getenv("MEMRA_TRUTH_VERBOSE"))
            std::printf("[truth] %s %s: %zu of %zu differ, rel %.3g, max |diff| %.3g\n",
                        expertkit::qtype_name(qtype).c_str(), what.c_str(), c.differing, ggml.size(), c.rel_error,
                        c.max_abs);
        if (identical) {
            if (c.identical()) return;
            size_t at = 0;
            while (ggml[at] == memra[at]) ++at;
            ADD_FAILURE() << backend() << " " << expertkit::qtype_name(qtype) << " " << what << ": " << c.differing
                          << " of " << ggml.size() << " values differ from ggml's (rel. error " << c.rel_error
                          << "); first at " << at << ": memra " << show(memra[at]) << ", ggml " << show(ggml[at]);
        } else if (!(c.rel_error <= bound)) {
            ADD_FAILURE() << backend() << " " << expertkit::qtype_name(qtype) << " " << what << ": rel. error "
                          << c.rel_error << " > " << bound << " allowed (" << c.differing << " of " << ggml.size()
                          << " values differ, max |diff| " << c.max_abs << ")";
        }
    }
};

class GgmlCalls : public ::testing::TestWithParam<int32_t> {
protected:
    void SetUp() override {
        MEMRA_TRUTH_REQUIRE_GGML_AVX2();
        const std::string line = library().describe();
        if (line.find("unusable:") != std::string::npos) {
            if (line.find("cpu lacks") != std::string::npos) GTEST_SKIP() << line;
            FAIL() << line;
        }
        const std::string name = expertkit::qtype_name(GetParam());
        if (backend() != "auto") {
            ASSERT_EQ(bench::served_by(line, name), backend())
                << "the forced backend does not serve " << name << ": " << line;
        }
    }
};

TEST_P(GgmlCalls, TokenAndRowsAsGgml) {
    const int32_t qtype = GetParam();
    const Checker check{qtype};
    bench::GgmlPeer &ggml = *ggml_peer();
    std::mt19937_64 rng(0x19ca + uint64_t(qtype));
    std::uniform_real_distribution<float> route(0.05f, 1.0f);
    const Scales scale_sets[] = {{1.0f, 1.0f, 1.0f}, {0.7f, 1.3f, 0.45f}};

    for (const auto &[n_embd, n_ff] : {std::pair<int32_t, int32_t>{512, 256}, {256, 768}}) {
        const MoeLayer layer(qtype, n_embd, n_ff, kExperts, rng);
        ggml.prepare(layer.ggml());
        for (const Scales &s : scale_sets) {
            ggml.set_scales(s.gate, s.up, s.down);
            const std::string at = shape_name(n_embd, n_ff) + (s.gate == 1.0f ? "" : " scaled");
            for (int32_t count : {1, 3, 6}) {
                std::vector<int32_t> ids(kExperts);
                std::iota(ids.begin(), ids.end(), 0);
                std::shuffle(ids.begin(), ids.end(), rng);
                ids.resize(size_t(count));
                std::vector<float> rw(static_cast<size_t>(count));
                std::vector<CpuExpertV2> experts;
                for (int32_t i = 0; i < count; ++i) {
                    rw[size_t(i)] = route(rng);
                    experts.push_back(layer.expert(ids[size_t(i)], s, rw[size_t(i)]));
                }
                const std::vector<float> x = expertkit::random_input(n_embd, rng);
                std::vector<float> got(size_t(n_embd), -1.0f), want(size_t(n_embd), -2.0f);
                library().token(experts, x.data(), got.data(), kThreads);
                ggml.token(kLayout, ids, rw, x.data(), want.data(), kGgmlThreads);
                ggml.pause();  // its workers would otherwise poll, competing with memra's
                check.judge("token " + at + ", " + std::to_string(count) + " experts", want, got);
            }
            for (int32_t m : {1, 7, 8, 32, 64}) {
                const int32_t e = m % kExperts;
                const std::vector<float> x = expertkit::random_input(m * n_embd, rng);
                std::vector<float> rw(static_cast<size_t>(m));
                for (float &r : rw) r = route(rng);
                const size_t out = size_t(m) * size_t(n_embd);
                std::vector<float> got(out, -1.0f), want(out, -2.0f);
                library().rows(layer.expert(e, s, 1.0f), x.data(), m, rw.data(), got.data(), kThreads);
                ggml.rows(kLayout, e, x.data(), m, rw.data(), want.data(), kGgmlThreads);
                ggml.pause();
                check.judge("rows " + at + ", m " + std::to_string(m), want, got);
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Formats, GgmlCalls, ::testing::ValuesIn(expertkit::all_qtypes()), qtype_param_name);

}  // namespace
}  // namespace memra::truth
