// The 256-bit builds' (avxvnni, avx2, avxvnni_emulated) panels of 8 output rows (issue 26 item 3:
// lanes over outputs): the panel vector of simd/panel_driver.h on ymm (Vec256) and the rows path
// of a format with panels. The formats' panels are simd/panels_q8_0_act.h's (selected in
// simd/panels256.h) and simd/panels_q8_K_act.h's, simd/panels_chunks.h's (simd/panels256_q8_K.h).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "simd/panel_driver.h"

namespace memra::simd::MEMRA_SIMD_NS {

// The panel vector of simd/panel_driver.h on ymm: 8 rows, the ISA layer's dot4 (vpdpbusd on
// AVX-VNNI, its exact emulation, or AVX2's vpmaddubsw + vpmaddwd within the formats' pair ranges)
// and dpwssd (vpdpwssd, or vpmaddwd + vpaddd: the same wrapping int32 sums).
struct Vec256 {
    static constexpr int kRows = 8;
    // scaled_subblock_sums (simd/panels_q8_K_act.h) without activation groups (0): with 16 ymm,
    // groups of 2 were 5-12% slower at m = 4 / 8 in cache (avxvnni Q4_K, IQ4_XS, Q3_K).
    static constexpr int kSumGroup = 0;
    static constexpr int kPassPanels = 0;  // one sub-block per pass
    static constexpr bool kPairSums = false;  // one sub-block per pass: nothing to pair
    using I = __m256i;
    using F = __m256;
    MEMRA_PANEL_VEC_OPS(_mm256, si256)
    static inline I broadcast128(__m128i v) { return _mm256_broadcastsi128_si256(v); }
    static inline I dot4(I acc, I u, I s) { return Isa::dot4(acc, u, s); }
    static inline I dot4_bcast(I acc, I u, const uint8_t *p) { return dot4(acc, u, bcast32(p)); }
    static inline I dpwssd(I acc, I a, I b) { return Isa::dot2_scaled(acc, a, b); }
    // acc + the dword sums of SIGNED weight bytes w (|w| in absw) x s, by the sign trick (ggml's
    // AVX2 form): |w| x (s with w's sign), exact while s >= -127 (Q8_0's and Q8_K's quantizers
    // give -127..127) and every pair fits the dot4 (|w| <= 128: 2 x 128 x 127 < 32768). The
    // panels of the weights whose w + K would saturate AVX2's dot4 (signed_panels below).
    static inline I dot4_signed(I acc, I absw, I w, I s) { return Isa::dot4(acc, absw, _mm256_sign_epi8(s, w)); }
    static inline F cvtph(const uint16_t *h) { return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i *>(h))); }
    // Rows k and k + 4's 16 bytes at off in the two 128-bit lanes.
    static inline I rows4(const uint8_t *const p[], size_t off, int k) {
        return _mm256_setr_m128i(load128(p[k] + off), load128(p[k + 4] + off));
    }
    // 8 rows' 32 bytes (w[r]: row r) as 8 panels (P[g] dword r = row r's dword g): the 8 x 8
    // transpose of int32, unpack 32, unpack 64 (rows 4q .. 4q + 3 of dwords g and g + 4 in the
    // two lanes), then the 128-bit lanes paired.
    static inline void dense(const __m256i w[8], I P[8]) {
        I t[8], u[8];
        for (int r = 0; r < 8; r += 2) {
            t[r] = _mm256_unpacklo_epi32(w[r], w[r + 1]);      // per lane: dwords 0, 1 of rows r, r + 1
            t[r + 1] = _mm256_unpackhi_epi32(w[r], w[r + 1]);  // dwords 2, 3
        }
        for (int q = 0; q < 8; q += 4) {
            u[q] = _mm256_unpacklo_epi64(t[q], t[q + 2]);          // dword 0 (lane 0), 4 (lane 1)
            u[q + 1] = _mm256_unpackhi_epi64(t[q], t[q + 2]);      // 1, 5
            u[q + 2] = _mm256_unpacklo_epi64(t[q + 1], t[q + 3]);  // 2, 6
            u[q + 3] = _mm256_unpackhi_epi64(t[q + 1], t[q + 3]);  // 3, 7
        }
        for (int g = 0; g < 4; ++g) {
            P[g] = _mm256_permute2x128_si256(u[g], u[4 + g], 0x20);
            P[g + 4] = _mm256_permute2x128_si256(u[g], u[4 + g], 0x31);
        }
    }
};

// The rows of a call in panels of 8 rows, then the tiles of simd/common.h (rows % 8, a call of
// fewer than MinM activations, or one the panels do not take). (Two panels per activation
// broadcast, 16 rows in two ymm accumulators, was measured and dropped for the Q8_0-activation
// formats: within the noise, plugins/simd/README.md.)
template <class F, int32_t MinM = kPanelMinM>
struct Panels256RowsPath {
    static constexpr bool kEnabled = true;
    static inline void gemm(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const uint8_t *x,
                            size_t xq_stride, int32_t m, float *y, size_t ldy) {
        const int32_t r =
            m < MinM ? 0 : PanelDriver<F, Vec256, PanelOf<F, Vec256>>::gemm(w, row_bytes, rows, n, x, xq_stride, m, y, ldy);
        gemm_tiles<F>(w, row_bytes, r, rows, n, x, xq_stride, m, y, ldy);
    }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
