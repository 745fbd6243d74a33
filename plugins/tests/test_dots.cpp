// Dot products through the backend table's gemv: for every quantized weight format, ggml's
// quantized activation (act_q_hex) in, ggml's AVX2 vec_dot result out within the derived bound of
// two float orders (testkit/dot_bound.h: memra sums in the canonical order v2, ggml in its own);
// and close to the f64 reference. F32 (no ggml order exists) against an independent re-statement of the
// project's documented order, and against f64; BF16 against a re-statement of vdpbf16ps's order
// and, on a CPU that has the instruction, against ggml's AVX512_BF16 dot itself.
#include <gtest/gtest.h>

#include <immintrin.h>

#include <cmath>
#include <random>
#include <vector>

#include "common/fp_convert.h"
#include "common/quantize.h"
#include "formats.h"
#include "dot_bound.h"
#include "reference_data.h"
#include "test_util.h"

namespace memra::plugin_tests {
namespace {

float gemv1(const memra_kernel_v2 &k, const std::vector<uint8_t> &w, int32_t n, const void *xq) {
    float y = -12345.0f;
    k.gemv(w.data(), w.size(), 1, n, xq, &y);
    return y;
}

class QuantizedDot : public ::testing::TestWithParam<const char *> {};

// ggml's AVX2 vec_dot sums in the eight lanes of §5.2, memra in the canonical order v2 (§5.3):
// the same exact block sums in two float orders, within testkit::dot_order_bound (derived there)
// of each other. The bound is a few ulps of the row's magnitude; a wrong block, scale or min term
// misses it by orders of magnitude.
TEST_P(QuantizedDot, WithinOrderBoundOfGgmlAvx2) {
    const memra_qtype_info &info = qtype_by_name(GetParam());
    const memra_kernel_v2 &k = scalar_kernel(info.id);
    for (const auto &t : testkit::load_dot_trials(GetParam())) {
        const int32_t n = int32_t(t.act_f32.size());
        ASSERT_EQ(t.w.size(), size_t(n / info.block_elems) * size_t(info.block_bytes));
        const float got = gemv1(k, t.w, n, t.act_q.data());
        EXPECT_NEAR(double(got), double(t.dot_avx2()), testkit::dot_order_bound(info.id, t.w.data(), t.act_q.data(), n))
            << GetParam() << " trial " << t.index << ": got " << got << " (0x" << std::hex << bits(got)
            << "), ggml avx2 " << t.dot_avx2() << " (0x" << t.dot_avx2_bits << "), generic " << t.dot_generic();
    }
}

TEST_P(QuantizedDot, CloseToF64Reference) {
    const memra_qtype_info &info = qtype_by_name(GetParam());
    const memra_kernel_v2 &k = scalar_kernel(info.id);
    for (const auto &t : testkit::load_dot_trials(GetParam())) {
        const int32_t n = int32_t(t.act_f32.size());
        // Scale of the float rounding: sum |w_i a_i| of the decoded operands.
        std::vector<float> w(static_cast<size_t>(n));
        k.dequantize_row(t.w.data(), n, w.data());
        const std::vector<float> a = expertkit::dequantize_activation(info.act_format, t.act_q.data(), n);
        double magnitude = 0;
        for (int32_t i = 0; i < n; ++i) magnitude += std::fabs(double(w[size_t(i)]) * double(a[size_t(i)]));
        const float got = gemv1(k, t.w, n, t.act_q.data());
        // The float rounding bound: the integer sums within a block are exact (int32, far from
        // overflow); each block's term takes at most 2 roundings (d_w * d_a, then the fma into
        // the running sum; the conversion of S is exact below 2^24), and the terms meet in at
        // most `blocks` sequential additions (NVFP4's 16-element sub-blocks counted as blocks):
        // |got - exact| <= k u S (Higham's bound for a sum of products), k = blocks + 5,
        // u = 2^-24, S = sum of |term|. S <= magnitude when each term is one block's sum; the
        // formats with a min or an offset (q2_K, q3_K, q4_K, q5_K) sum it as a separate term,
        // which on these ggml-quantized rows (mins about the size of the block's weights) is of
        // the order of the block's |w a| sum: S <= 4 magnitude is allowed for every format (not
        // a proof for arbitrary bytes; testkit/dot_bound.h has one).
        const double blocks = double(n / (info.block_elems == 64 ? 16 : info.block_elems)), u = 0x1p-24;
        EXPECT_NEAR(double(got), t.dot_f64, (blocks + 5) * u * 4 * magnitude) << GetParam() << " trial " << t.index;
    }
}

INSTANTIATE_TEST_SUITE_P(AllQuantized, QuantizedDot, ::testing::ValuesIn(kQuantizedNames),
                         [](const auto &info) { return std::string(info.param); });

// The documented F32 order, restated independently: lane k of 64 sums i % 64 == k by fma
// in ascending i; lanes folded by halves down to 8 (k += k + 32, k += k + 16, k += k + 8); then
// r_j = acc[j+4] + acc[j], (r0 + r2) + (r1 + r3).
float documented_order(const std::vector<float> &w, const std::vector<float> &x) {
    float acc[64] = {};
    for (size_t i = 0; i < w.size(); ++i) acc[i % 64] = std::fma(w[i], x[i], acc[i % 64]);
    for (int k = 0; k < 32; ++k) acc[k] += acc[k + 32];
    for (int k = 0; k < 16; ++k) acc[k] += acc[k + 16];
    for (int k = 0; k < 8; ++k) acc[k] += acc[k + 8];
    const float r0 = acc[4] + acc[0], r1 = acc[5] + acc[1], r2 = acc[6] + acc[2], r3 = acc[7] + acc[3];
    return (r0 + r2) + (r1 + r3);
}

// ggml's F32 dot as its AVX-512 build computes it (ggml_vec_dot_f32: four 16-lane accumulators,
// i.e. 64 lanes, reduced x0 += x2, x1 += x3, x0 += x1, then the 16 lanes by halves), and the
// 8-lane order this project used before.
float ggml_avx512_order(const std::vector<float> &w, const std::vector<float> &x) {
    float acc[64] = {};
    for (size_t i = 0; i < w.size(); ++i) acc[i % 64] = std::fma(w[i], x[i], acc[i % 64]);
    for (int width = 32; width >= 1; width /= 2)
        for (int k = 0; k < width; ++k) acc[k] += acc[k + width];
    return acc[0];
}
float eight_lane_order(const std::vector<float> &w, const std::vector<float> &x) {
    float acc[8] = {};
    for (size_t i = 0; i < w.size(); ++i) acc[i % 8] = std::fma(w[i], x[i], acc[i % 8]);
    const float r0 = acc[4] + acc[0], r1 = acc[5] + acc[1], r2 = acc[6] + acc[2], r3 = acc[7] + acc[3];
    return (r0 + r2) + (r1 + r3);
}

// The dot in double; float accumulation of n products may err by about n * 2^-24 of the sum of
// magnitudes in the worst case, far less in practice: 1e-6 of that sum is ample and still catches
// a wrong or missing term.
void expect_near_f64_dot(float got, const std::vector<float> &w, const std::vector<float> &x) {
    double ref = 0, mag = 0;
    for (size_t i = 0; i < w.size(); ++i) {
        ref += double(w[i]) * double(x[i]);
        mag += std::fabs(double(w[i]) * double(x[i]));
    }
    EXPECT_NEAR(double(got), ref, 1e-6 * mag) << "n = " << w.size();
}

TEST(FloatDot, F32FollowsDocumentedOrder) {
    std::mt19937 rng(11);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (int32_t n : {1, 7, 8, 13, 64, 65, 512, 1000, 4096, 4100}) {
        std::vector<float> w(static_cast<size_t>(n)), x(static_cast<size_t>(n));
        for (auto &v : w) v = dist(rng);
        for (auto &v : x) v = dist(rng);
        std::vector<uint8_t> wb(4 * size_t(n));
        std::memcpy(wb.data(), w.data(), wb.size());
        const float got = gemv1(scalar_kernel(0), wb, n, x.data());
        EXPECT_EQ(bits(got), bits(documented_order(w, x))) << "n = " << n;
        expect_near_f64_dot(got, w, x);
    }
}

// The documented BF16 order, restated from Intel's description of vdpbf16ps (SDM: per lane
// "srcdest += src1.odd * src2.odd; srcdest += src1.even * src2.even", FP32 FMAs with DAZ in,
// FTZ out, RNE) and ggml_vec_dot_bf16 (two such accumulators over each 64 elements, each
// reduced by _mm512_reduce_add_ps, summed in double with the tail's products).
float flushed(float v) { return std::fpclassify(v) == FP_SUBNORMAL ? std::copysign(0.0f, v) : v; }

float documented_bf16_order(const std::vector<float> &w, const std::vector<float> &x) {
    const size_t n = w.size(), n64 = n / 64 * 64;
    float lane[32] = {};
    for (size_t p = 0; p < n64 / 2; ++p) {
        float &l = lane[p % 32];
        l = flushed(std::fma(flushed(w[2 * p + 1]), flushed(x[2 * p + 1]), l));
        l = flushed(std::fma(flushed(w[2 * p]), flushed(x[2 * p]), l));
    }
    auto reduce16 = [](const float *v) {  // GCC's avx512fintrin.h __MM512_REDUCE_OP(+)
        float t3[8], t6[4];
        for (int k = 0; k < 8; ++k) t3[k] = v[k + 8] + v[k];
        for (int k = 0; k < 4; ++k) t6[k] = t3[k + 4] + t3[k];
        return (t6[0] + t6[2]) + (t6[1] + t6[3]);
    };
    double sum = 0;
    sum += reduce16(lane);
    sum += reduce16(lane + 16);
    for (size_t i = n64; i < n; ++i) sum += double(w[i] * x[i]);
    return float(sum);
}

// ggml_vec_dot_bf16 as its AVX512_BF16 build has it, compiled here for that instruction set (run
// only where the CPU has it). GCC 12 reports a false -Wuninitialized inside _mm512_reduce_add_ps
// (the _mm256_undefined_pd pass-through of its extract), as for the avx512 plugin.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
__attribute__((target("avx512f,avx512bf16"))) float ggml_dot_bf16_avx512bf16(const uint16_t *x, const uint16_t *y,
                                                                         int n) {
    int i = 0;
    double sumf = 0;
    __m512 c1 = _mm512_setzero_ps(), c2 = _mm512_setzero_ps();
    for (; i + 64 <= n; i += 64) {
        c1 = _mm512_dpbf16_ps(c1, (__m512bh)_mm512_loadu_si512(x + i), (__m512bh)_mm512_loadu_si512(y + i));
        c2 = _mm512_dpbf16_ps(c2, (__m512bh)_mm512_loadu_si512(x + i + 32), (__m512bh)_mm512_loadu_si512(y + i + 32));
    }
    sumf += double(_mm512_reduce_add_ps(c1));
    sumf += double(_mm512_reduce_add_ps(c2));
    for (; i < n; ++i) sumf += double(bf16_to_f32(x[i]) * bf16_to_f32(y[i]));
    return float(sumf);
}
#pragma GCC diagnostic pop

// bf16 rows of ordinary values, and of tiny ones whose products and partial sums fall below
// FLT_MIN (exponents near -63 and -75; some subnormal bf16 inputs): DAZ and FTZ then decide bits.
std::vector<uint16_t> bf16_row(int32_t n, bool tiny, std::mt19937 &rng) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<uint16_t> row(static_cast<size_t>(n));
    for (auto &h : row) {
        float v = normal(rng);
        if (tiny) v = std::ldexp(v, -60 - int(rng() % 16));
        h = f32_to_bf16(v);
        if (tiny && rng() % 9 == 0) h = uint16_t((rng() & 0x807F) | (rng() % 2 ? 0 : 1));  // subnormal or zero
    }
    return row;
}

TEST(FloatDot, Bf16FollowsDocumentedOrder) {
    std::mt19937 rng(12);
    const bool has_dpbf16 = __builtin_cpu_supports("avx512bf16");
    int checked_with_instruction = 0;
    for (bool tiny : {false, true})
        for (int32_t n : {1, 9, 64, 256, 1000, 4096, 4163}) {
            const std::vector<uint16_t> wh = bf16_row(n, tiny, rng), xh = bf16_row(n, tiny, rng);
            std::vector<float> w(static_cast<size_t>(n)), x(static_cast<size_t>(n));
            for (int32_t i = 0; i < n; ++i) w[size_t(i)] = bf16_to_f32(wh[size_t(i)]), x[size_t(i)] = bf16_to_f32(xh[size_t(i)]);
            std::vector<uint8_t> wb(2 * size_t(n));
            std::memcpy(wb.data(), wh.data(), wb.size());
            const float got = gemv1(scalar_kernel(30), wb, n, xh.data());
            EXPECT_EQ(bits(got), bits(documented_bf16_order(w, x))) << "n = " << n << (tiny ? " tiny" : "");
            if (!tiny) expect_near_f64_dot(got, w, x);
            if (has_dpbf16) {
                EXPECT_EQ(bits(got), bits(ggml_dot_bf16_avx512bf16(wh.data(), xh.data(), n)))
                    << "against vdpbf16ps, n = " << n << (tiny ? " tiny" : "");
                ++checked_with_instruction;
            }
        }
    if (!has_dpbf16) GTEST_SKIP() << "checked against the restated order only: this CPU has no avx512_bf16";
    EXPECT_EQ(checked_with_instruction, 14);
}

// Issue 13: a 4096-wide F32 dot must err no more than ggml's. Mean |error| against the double
// dot over 400 random rows (normal weights and inputs): 64 lanes measure ~1.6e-7 of |dot|, ggml's
// 64-lane order the same up to its last folds, the old 8 lanes ~3.9e-7. The mean of 400 such
// errors fluctuates by ~5% (each is roughly half-normal), so "no worse than ggml" is checked as
// at most 1.15 x ggml's mean, and the gain over 8 lanes as at most 0.7 x theirs.
TEST(FloatDot, F32ErrorIsNoWorseThanGgmls) {
    std::mt19937 rng(13);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    constexpr int32_t n = 4096;
    double err_memra = 0, err_ggml = 0, err_eight = 0;
    std::vector<float> w(n), x(n);
    std::vector<uint8_t> wb(4 * size_t(n));
    for (int row = 0; row < 400; ++row) {
        for (auto &v : w) v = dist(rng);
        for (auto &v : x) v = dist(rng);
        std::memcpy(wb.data(), w.data(), wb.size());
        double ref = 0;
        for (int32_t i = 0; i < n; ++i) ref += double(w[size_t(i)]) * double(x[size_t(i)]);
        err_memra += std::fabs(double(gemv1(scalar_kernel(0), wb, n, x.data())) - ref);
        err_ggml += std::fabs(double(ggml_avx512_order(w, x)) - ref);
        err_eight += std::fabs(double(eight_lane_order(w, x)) - ref);
    }
    EXPECT_LE(err_memra, 1.15 * err_ggml) << "memra " << err_memra << ", ggml " << err_ggml;
    EXPECT_LE(err_memra, 0.7 * err_eight) << "memra " << err_memra << ", 8 lanes " << err_eight;
}

}  // namespace
}  // namespace memra::plugin_tests
