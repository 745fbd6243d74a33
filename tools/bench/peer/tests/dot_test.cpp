// Dot products, against ggml-cpu's own vec_dot on the same bytes: for each format, rows of the
// blocks of truth_blocks.h (random, synthetic, edge-case) times activations quantized by ggml's
// from_float into its vec_dot_type, through every plugin's gemv and gemm (m = 3) against
// ggml_get_type_traits_cpu(type)->vec_dot of the CPU variant ggml's loader chose. memra's kernels
// sum the same exact block integers as ggml's but in the canonical order v2 (formats spec §5.3:
// one fma per block) where ggml's x86 vec_dot keeps eight lanes per block (§5.2), so every
// quantized format must agree within testkit::dot_order_bound (derived in testkit/dot_bound.h:
// two sums of the same terms with k roundings each, 2 gamma_k T), edge-case scales included; rows
// whose partial sums can overflow have no finite bound (there the conformance suite's bit-for-bit
// checks against the scalar plugin are what holds them).
//
// F32 and BF16 have no single ggml order: ggml sums them in the lanes of its variant's SIMD width.
// memra's F32 order is ggml's AVX-512 one and its BF16 order ggml's AVX512_BF16 one (vdpbf16ps
// pairs; truth_env.h): bit for bit with those variants. With others, products are exact in both
// (an fma rounds once; a bf16 x bf16 product fits a float), so each result is within gamma_n * S
// of the exact dot, S = sum |w_i x_i|, gamma_n = n u / (1 - n u), u = 2^-24 (Higham, Accuracy and
// Stability, (3.5)): two orders differ by at most 2 gamma_n S, the bound used. Their rows are synthetic (finite, no subnormals, which
// vdpbf16ps would flush): the decode test covers every bit pattern of those formats.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "backends.h"
#include "dot_bound.h"
#include "formats.h"
#include "memra/cpu_experts.h"
#include "memra/qtypes.h"
#include "param_names.h"
#include "synthetic_weights.h"
#include "truth_blocks.h"
#include "truth_env.h"

namespace memra::truth {
namespace {

constexpr int32_t kN = 1024;  // values per row: whole blocks of every format
constexpr int32_t kActs = 3;  // activations per format (gemm's m)

int32_t ggml_act_type(int32_t act) {
    static const int32_t types[] = {0, 30, 8, 15};  // F32, BF16, Q8_0, Q8_K
    return types[act];
}

TEST(GgmlDotSetup, ActivationFormatsAreGgmls) {
    MEMRA_TRUTH_REQUIRE_GGML();
    for (int32_t qtype : expertkit::all_qtypes()) {
        const memra_qtype_info &info = expertkit::qtype_info(qtype);
        std::vector<uint8_t> row(size_t(info.block_bytes) * (256 / size_t(info.block_elems)) + 1024, 0);
        std::vector<uint8_t> act(2048, 0);
        int32_t type = -1;
        ggml_peer()->vec_dot(qtype, 256, row.data(), act.data(), &type);
        EXPECT_EQ(type, ggml_act_type(info.act_format)) << info.name;
    }
}

// Every plugin's gemv and gemm of rows of n values against ggml's vec_dot of the same bytes.
void dots_as_ggml(int32_t qtype, int32_t n) {
    const memra_qtype_info &info = expertkit::qtype_info(qtype);
    const bool plain = qtype == MEMRA_QTYPE_F32 || qtype == MEMRA_QTYPE_BF16;
    const bool exact = (qtype == MEMRA_QTYPE_F32 && ggml_f32_order_is_memras()) ||
                       (qtype == MEMRA_QTYPE_BF16 && ggml_bf16_order_is_memras());
    const size_t row_bytes = expertkit::row_bytes(qtype, n);
    std::mt19937_64 rng(0x19d0 + uint64_t(qtype));

    std::vector<uint8_t> w;
    if (!plain) {
        const Blocks blocks = truth_blocks(qtype, 0x19050 + uint64_t(qtype));
        const size_t rows = blocks.bytes.size() / row_bytes;
        w.assign(blocks.bytes.begin(), blocks.bytes.begin() + long(rows * row_bytes));
    } else {
        w = expertkit::random_weights(qtype, 64, n, rng);
    }
    const int32_t rows = int32_t(w.size() / row_bytes);

    // The activations, quantized by ggml.
    const int32_t act = info.act_format;
    const size_t act_bytes = memra_act_row_bytes(act, n);
    std::vector<uint8_t> xq(act_bytes * kActs);
    const float sigmas[kActs] = {1.0f, 0.01f, 40.0f};
    for (int j = 0; j < kActs; ++j) {
        const std::vector<float> x = expertkit::random_input(n, rng, sigmas[j]);
        ggml_peer()->from_float(ggml_act_type(act), x.data(), xq.data() + size_t(j) * act_bytes, n);
    }
    // ggml's dots, and the bound of each (integer formats: testkit/dot_bound.h).
    std::vector<float> want(size_t(rows) * kActs), bound(want.size(), 0.0f);
    std::vector<float> wf(n), xf(n);
    for (int j = 0; j < kActs; ++j) {
        if (plain) ggml_peer()->to_float(ggml_act_type(act), xq.data() + size_t(j) * act_bytes, xf.data(), n);
        for (int32_t r = 0; r < rows; ++r) {
            int32_t type = -1;
            want[size_t(j) * size_t(rows) + size_t(r)] =
                ggml_peer()->vec_dot(qtype, n, w.data() + size_t(r) * row_bytes, xq.data() + size_t(j) * act_bytes, &type);
            if (!plain) {
                bound[size_t(j) * size_t(rows) + size_t(r)] = float(
                    testkit::dot_order_bound(qtype, w.data() + size_t(r) * row_bytes, xq.data() + size_t(j) * act_bytes, n));
                continue;
            }
            ggml_peer()->to_float(qtype, w.data() + size_t(r) * row_bytes, wf.data(), n);
            double s = 0;
            for (int32_t i = 0; i < n; ++i) s += std::fabs(double(wf[size_t(i)]) * double(xf[size_t(i)]));
            const double u = std::ldexp(1.0, -24), gamma = n * u / (1 - n * u);
            bound[size_t(j) * size_t(rows) + size_t(r)] = float(2 * gamma * s);
        }
    }

    for (const Plugin &p : runnable_plugins()) {
        const memra_kernel_v2 *k = kernel_of(p, qtype);
        if (!k) {
            // A rows-only build (plugins/amx) may leave a format to the plugins below it; a
            // build that serves the token path serves every format.
            if (conformance::serves_token_path(*p.table)) ADD_FAILURE() << p.label << " has no kernel for " << info.name;
            continue;
        }
        std::vector<float> gemv(want.size(), -12345.0f), gemm(want.size(), -12345.0f);
        if (k->gemv)
            for (int j = 0; j < kActs; ++j)
                k->gemv(w.data(), row_bytes, rows, n, xq.data() + size_t(j) * act_bytes,
                        gemv.data() + size_t(j) * size_t(rows));
        if (k->gemm) k->gemm(w.data(), row_bytes, rows, n, xq.data(), act_bytes, kActs, gemm.data(), size_t(rows));
        const bool served[] = {k->gemv != nullptr, k->gemm != nullptr};  // NULL: left to a lower plugin
        for (const auto &[what, got] : {std::make_pair("gemv", &gemv), std::make_pair("gemm", &gemm)}) {
            if (!served[got == &gemv ? 0 : 1]) continue;
            int bad = 0;
            for (size_t i = 0; i < want.size(); ++i) {
                const float g = (*got)[i], e = want[i];
                // An infinite bound (a row whose |w a| sum passes FLT_MAX, or an infinite or NaN
                // scale among the edge blocks: testkit/dot_bound.h) allows any value: the orders
                // overflow at different points there.
                const bool ok = exact ? same_float(g, e)
                                      : std::isinf(bound[i]) || std::fabs(double(g) - double(e)) <= double(bound[i]);
                if (ok) continue;
                if (bad++ < 5)
                    ADD_FAILURE() << p.label << " " << what << " " << info.name << ", row " << i % size_t(rows)
                                  << ", activation " << i / size_t(rows) << ": memra " << show(g) << ", ggml "
                                  << show(e) << (exact ? "" : ", allowed difference " + show(bound[i]));
            }
            EXPECT_EQ(bad, 0) << p.label << " " << what << ", n " << n << ": dots unlike ggml's, of " << want.size();
        }
    }
}

class GgmlDot : public ::testing::TestWithParam<int32_t> {};

TEST_P(GgmlDot, EveryPluginDotsAsGgml) {
    MEMRA_TRUTH_REQUIRE_GGML_AVX2();
    dots_as_ggml(GetParam(), kN);
}

// Rows of an odd number of 32-element blocks: ggml's MXFP4 dot takes blocks in pairs and adds an
// odd last one as a scalar tail (formats spec §5.2), which kN's even count never reaches.
class GgmlDotOddBlocks : public ::testing::TestWithParam<int32_t> {};

TEST_P(GgmlDotOddBlocks, OddBlockCountsDotAsGgml) {
    MEMRA_TRUTH_REQUIRE_GGML_AVX2();
    for (int32_t n : {32, 96, 1056}) dots_as_ggml(GetParam(), n);
}

std::vector<int32_t> block32_qtypes() {
    std::vector<int32_t> out;
    for (int32_t qtype : expertkit::all_qtypes())
        if (expertkit::qtype_info(qtype).block_elems == 32) out.push_back(qtype);
    return out;
}

INSTANTIATE_TEST_SUITE_P(Formats, GgmlDot, ::testing::ValuesIn(expertkit::all_qtypes()), qtype_param_name);
INSTANTIATE_TEST_SUITE_P(Block32Formats, GgmlDotOddBlocks, ::testing::ValuesIn(block32_qtypes()), qtype_param_name);

}  // namespace
}  // namespace memra::truth
