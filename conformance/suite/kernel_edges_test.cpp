// Per backend, the inputs where a SIMD kernel is most likely to part from the scalar plugin,
// beyond the shapes of plan.h (conformance_test.cpp):
//  - BF16 where the pair order's DAZ/FTZ decide the bits (plugins/scalar/dot_float.cpp):
//    weights and activations around 2^-60..2^-75, whose products and partial sums fall below
//    FLT_MIN, with some subnormal and zero elements, and rows with a tail after the last whole
//    64. Every build (by vdpbf16ps or by vfmadds under MXCSR DAZ/FTZ) must equal the scalar
//    plugin and leave the caller's MXCSR as it found it.
//  - MXFP4 blocks with every E8M0 scale byte 0..255 (subnormal 2^-128 and 2^-127, the largest
//    2^127, whose products overflow): the SIMD builds decode the scales of several rows and
//    blocks at once in vector form (plugins/simd/wide512_q8_0_act.h MXFP4RowPair).
//  - The activation quantizers on blocks that are ordinary, tiny, huge, exactly on rounding ties,
//    all zero, subnormal, with NaN or infinity, and with the largest magnitude reached first by
//    a negative and later by a positive value (Q8_K keeps the first): the scalar plugin's bytes
//    (the canonical quantizers every kernel consumes), and nothing written past the row.
#include <gtest/gtest.h>
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/fp_convert.h"
#include "formats.h"
#include "kernel_case.h"
#include "memra/cpu_experts.h"
#include "memra/qtypes.h"
#include "suite_backends.h"
#include "synthetic_weights.h"

namespace memra::conformance {
namespace {

class KernelEdges : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override { use_backend(GetParam(), reference_, subject_); }

    const Backend *reference_ = nullptr;
    const Backend *subject_ = nullptr;
};

std::vector<uint16_t> tiny_bf16(size_t count, std::mt19937 &rng) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<uint16_t> v(count);
    for (auto &h : v) {
        h = f32_to_bf16(std::ldexp(normal(rng), -60 - int(rng() % 16)));
        if (rng() % 9 == 0) h = uint16_t((rng() & 0x807F) | (rng() % 2));  // subnormal or zero
    }
    return v;
}

TEST_P(KernelEdges, Bf16FlushesAndRoundsAsVdpbf16ps) {
    const memra_kernel_v2 *k = find_kernel(*subject_->table, MEMRA_QTYPE_BF16);
    if (!k) return;  // served by a lower plugin (a rows-only build): nothing of its own to check
    const memra_kernel_v2 &sk = *find_kernel(*reference_->table, MEMRA_QTYPE_BF16);
    std::mt19937 rng(29);
    for (int32_t n : {64, 1000, 4096}) {
        constexpr int32_t kOut = 9, kActs = 5;
        const size_t row_bytes = 2 * size_t(n);
        const std::vector<uint16_t> w = tiny_bf16(size_t(kOut) * size_t(n), rng);
        const std::vector<uint16_t> x = tiny_bf16(size_t(kActs) * size_t(n), rng);
        const auto *ggml = reinterpret_cast<const uint8_t *>(w.data());
        std::vector<float> want(size_t(kOut) * kActs), got(want.size(), -7.0f), gemv(size_t{kOut});
        for (int32_t j = 0; j < kActs; ++j)
            sk.gemv(ggml, row_bytes, kOut, n, &x[size_t(j) * size_t(n)], &want[size_t(j) * kOut]);
        const std::vector<uint8_t> repacked = in_kernel_layout(*k, ggml, row_bytes, kOut, n);  // the subject's layout
        const uint8_t *wb = repacked.data();
        const unsigned mxcsr = _mm_getcsr();
        if (k->gemm) {
            k->gemm(wb, row_bytes, kOut, n, x.data(), row_bytes, kActs, got.data(), kOut);
            EXPECT_EQ(first_difference(got.data(), want.data(), want.size()), "") << "gemm, n = " << n;
        }
        if (k->gemv)
            for (int32_t j = 0; j < kActs; ++j) {
                k->gemv(wb, row_bytes, kOut, n, &x[size_t(j) * size_t(n)], gemv.data());
                EXPECT_EQ(first_difference(gemv.data(), &want[size_t(j) * kOut], gemv.size()), "")
                    << "gemv, n = " << n << ", activation " << j;
            }
        EXPECT_EQ(_mm_getcsr(), mxcsr) << "MXCSR changed by the kernels";
    }
}

TEST_P(KernelEdges, Mxfp4EveryScaleByteAsTheScalarPlugin) {
    const memra_kernel_v2 *k = find_kernel(*subject_->table, MEMRA_QTYPE_MXFP4);
    if (!k) return;  // served by a lower plugin (a rows-only build): nothing of its own to check
    const memra_kernel_v2 &sk = *find_kernel(*reference_->table, MEMRA_QTYPE_MXFP4);
    constexpr size_t kBlockBytes = 17;
    constexpr int32_t kOut = 9, kActs = 3;  // two 4-row tiles and a single row
    std::mt19937_64 rng(31);
    for (int32_t n : {32 * 29, 32 * 30})  // an odd and an even number of blocks per row
        // Row r's blocks all scaled by e = first + r: a wrong scale shows in the row's result
        // even at 2^-128 (beside larger blocks it would be absorbed); first + r covers 0..255.
        for (int first = 0; first < 256; first += kOut) {
            SCOPED_TRACE("n = " + std::to_string(n) + ", scale bytes from " + std::to_string(first));
            const size_t row_bytes = size_t(n / 32) * kBlockBytes;
            std::vector<uint8_t> w(size_t(kOut) * row_bytes);
            for (auto &byte : w) byte = uint8_t(rng());
            for (int32_t r = 0; r < kOut; ++r)
                for (size_t blk = 0; blk < row_bytes / kBlockBytes; ++blk)
                    w[size_t(r) * row_bytes + blk * kBlockBytes] = uint8_t(first + r);
            const size_t act_bytes = memra_act_row_bytes(MEMRA_ACT_Q8_0, n);
            std::vector<uint8_t> xq;
            for (int32_t j = 0; j < kActs; ++j) {
                const std::vector<float> x = expertkit::random_input(n, rng);
                const std::vector<uint8_t> q = expertkit::quantize_activation(MEMRA_ACT_Q8_0, x.data(), n);
                xq.insert(xq.end(), q.begin(), q.end());
            }
            std::vector<float> want(size_t(kOut) * kActs), got(want.size(), -7.0f), gemv(size_t{kOut});
            for (int32_t j = 0; j < kActs; ++j)
                sk.gemv(w.data(), row_bytes, kOut, n, &xq[size_t(j) * act_bytes], &want[size_t(j) * kOut]);
            const std::vector<uint8_t> repacked = in_kernel_layout(*k, w.data(), row_bytes, kOut, n);
            if (k->gemm) {
                k->gemm(repacked.data(), row_bytes, kOut, n, xq.data(), act_bytes, kActs, got.data(), kOut);
                EXPECT_EQ(first_difference(got.data(), want.data(), want.size()), "") << "gemm";
            }
            if (k->gemv)
                for (int32_t j = 0; j < kActs; ++j) {
                    k->gemv(repacked.data(), row_bytes, kOut, n, &xq[size_t(j) * act_bytes], gemv.data());
                    EXPECT_EQ(first_difference(gemv.data(), &want[size_t(j) * kOut], gemv.size()), "")
                        << "gemv, activation " << j;
                }
        }
}

// Rows of 32-value blocks, each of one kind (block index mod 10).
std::vector<float> quantizer_inputs(int32_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(n));
    for (int32_t b = 0; b < n / 32; ++b) {
        float *xb = x.data() + size_t(b) * 32;
        const int kind = b % 10;
        const float scale = kind == 1 ? 1e-30f : kind == 2 ? 1e30f : kind == 3 ? 1e-41f : 1.0f;
        for (int i = 0; i < 32; ++i) xb[i] = scale * normal(rng);
        if (kind == 4)  // amax 127: x * 127/amax = x, so halves are exact ties
            for (int i = 0; i < 32; ++i) xb[i] = i == 0 ? 127.0f : float(i % 64) - 15.5f;
        if (kind == 5) std::fill(xb, xb + 32, 0.0f);
        if (kind == 6) {  // BF16's rounding cases: ties to even both ways, overflow, a signalling NaN
            const uint32_t patterns[] = {0x3F808000u, 0x3F818000u, 0x7F7FFFFFu, 0xFF7FFFFFu,
                                         0x7F800001u, 0x80000000u, 0x00008000u, 0x00018000u};
            for (int i = 0; i < 8; ++i) std::memcpy(&xb[i], &patterns[i], 4);
            xb[8 + rng() % 24] = std::numeric_limits<float>::quiet_NaN();
        }
        if (kind == 7) xb[rng() % 32] = -std::numeric_limits<float>::infinity();
        if (kind == 8) {
            xb[3] = -9.0f;
            xb[20] = 9.0f;
        }
        if (kind == 9) {  // a lone subnormal (or zero) maximum
            std::fill(xb, xb + 31, 0.0f);
            xb[31] = 1e-45f * float(rng() % 3);
        }
    }
    return x;
}

TEST_P(KernelEdges, QuantizersWriteTheCanonicalBytes) {
    for (int act = 0; act < MEMRA_ACT_FORMAT_COUNT; ++act) {
        const auto quantize = subject_->table->quantize[act];
        if (!quantize) continue;  // the core then uses another plugin's (canonical) quantizer
        for (int32_t n : {256, 4096, 2560 * 4})
            for (uint32_t seed : {1u, 2u, 3u}) {
                SCOPED_TRACE(std::string(memra_act_format_name(act)) + " n=" + std::to_string(n) +
                             " seed=" + std::to_string(seed));
                const std::vector<float> x = quantizer_inputs(n, seed);
                const size_t bytes = memra_act_row_bytes(act, n);
                std::vector<uint8_t> want(bytes, 0xA5), got(bytes + 64, 0x5A);
                reference_->table->quantize[act](x.data(), n, want.data());
                quantize(x.data(), n, got.data());
                const auto diff = std::mismatch(want.begin(), want.end(), got.begin());
                ASSERT_EQ(diff.first, want.end()) << "first differing byte " << diff.first - want.begin();
                for (size_t i = bytes; i < got.size(); ++i) ASSERT_EQ(got[i], 0x5A) << "wrote past the row";
            }
    }
}

INSTANTIATE_TEST_SUITE_P(Backends, KernelEdges, ::testing::ValuesIn(subject_names()),
                         [](const auto &i) { return i.param; });

}  // namespace
}  // namespace memra::conformance
