// The 256-bit builds' rows path (avxvnni, avx2, avxvnni_emulated) on panels of 8 output rows
// (issue 26 item 3: lanes over outputs): the generic panel driver (simd/panel_driver.h) and the
// panels of the formats paired with Q8_0 activations (simd/panels_q8_0_act.h) on ymm (Vec256): a
// 32-byte panel row holds 8 rows' 4 bytes, the dot4 is the ISA layer's (vpdpbusd on AVX-VNNI,
// its exact emulation, or AVX2's vpmaddubsw + vpmaddwd within the formats' pair ranges). Included
// by simd/formats_q8_0_act.h where the ISA selection does not define MEMRA_SIMD_WIDE512; rows a
// panel does not cover (rows % 8, or a call the panels do not take) go to the tiles of
// simd/common.h.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <type_traits>

#include "simd/panels_q8_0_act.h"

namespace memra::simd::MEMRA_SIMD_NS {

// The panel vector of simd/panel_driver.h on ymm: 8 rows, the ISA layer's dot4.
struct Vec256 {
    static constexpr int kRows = 8;
    using I = __m256i;
    using F = __m256;
    MEMRA_PANEL_VEC_OPS(_mm256, si256)
    static inline I broadcast128(__m128i v) { return _mm256_broadcastsi128_si256(v); }
    static inline I dot4(I acc, I u, I s) { return Isa::dot4(acc, u, s); }
    static inline F cvtph(const uint16_t *h) { return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i *>(h))); }
    // Rows k and k + 4's 16 bytes at off in the two 128-bit lanes.
    static inline I rows4(const uint8_t *const p[], size_t off, int k) {
        return _mm256_setr_m128i(load128(p[k] + off), load128(p[k + 4] + off));
    }
};

// Which formats take the 8-row panels in this build (plugins/simd/README.md has the
// measurements): all four where the dot4 is exact (AVX-VNNI and its emulation); on AVX2 not Q8_0,
// whose w + 128 would saturate vpmaddubsw: it keeps its sign-trick tiles (a sign-trick panel would
// need |w| and sign(w) panels: 16 ymm of weights; not tried).
template <class F>
inline constexpr bool kPanels256 = false;
template <>
inline constexpr bool kPanels256<Q8_0> = kQ8_0Offset == 128;
template <>
inline constexpr bool kPanels256<Q4_0> = true;
template <>
inline constexpr bool kPanels256<MXFP4> = true;
template <>
inline constexpr bool kPanels256<NVFP4> = true;

// The rows of a call in panels of 8 rows, then the tiles. (Two panels per activation broadcast,
// 16 rows in two ymm accumulators, was measured and dropped: within the noise, plugins/simd/README.md.)
template <class F>
struct RowsPath<F, std::enable_if_t<kPanels256<F>>> {
    static constexpr bool kEnabled = true;
    static inline void gemm(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const uint8_t *x,
                            size_t xq_stride, int32_t m, float *y, size_t ldy) {
        const int32_t r = PanelDriver<F, Vec256, PanelOf<F, Vec256>>::gemm(w, row_bytes, rows, n, x, xq_stride, m, y, ldy);
        gemm_tiles<F>(w, row_bytes, r, rows, n, x, xq_stride, m, y, ldy);
    }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
