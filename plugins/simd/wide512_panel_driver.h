// The AVX-512 build's rows path on VNNI panels of 16 output rows (issue 26 item 3: lanes over
// outputs): the generic panel driver (simd/panel_driver.h) on 512-bit registers (Vec512), and
// the names the AVX-512 formats' panels share. The formats' panels are in simd/wide512_panels.h
// (Q8_0, Q4_0, MXFP4, NVFP4: simd/panels_q8_0_act.h on Vec512) and simd/wide512_panels_q8_K.h
// (Q4_K, Q5_K, Q6_K), simd/wide512_panels_chunks.h (Q2_K, Q3_K, IQ4_XS, IQ3_S).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "simd/panel_driver.h"

namespace memra::simd::MEMRA_SIMD_NS {

constexpr int kPanelRows = 16;

// The panel vector of simd/panel_driver.h on zmm: 16 rows, the EVEX vpdpbusd.
struct Vec512 {
    static constexpr int kRows = kPanelRows;
    // scaled_subblock_sums (simd/panels_q8_K_act.h): 4 activations' sums in registers, two dot4
    // chains each (8 independent vpdpbusd chains beside the 8 panels of a sub-block).
    static constexpr int kSumGroup = 4, kSumChains = 2;
    // and, past the groups, the panels of scaled_subblock_sums' sub-blocks held per pass
    static constexpr int kPassPanels = 16;
    using I = __m512i;
    using F = __m512;
    MEMRA_PANEL_VEC_OPS(_mm512, si512)
    static inline I broadcast128(__m128i v) { return _mm512_broadcast_i32x4(v); }
    static inline I dot4(I acc, I u, I s) { return _mm512_dpbusd_epi32(acc, u, s); }
    // dot4(acc, u, bcast32(p)) with the broadcast in the instruction's memory operand ({1to16}):
    // GCC 12 has no pattern folding a broadcast into vpdpbusd, so the intrinsics give a separate
    // vpbroadcastd per dot4.
    static inline I dot4_bcast(I acc, I u, const uint8_t *p) {
        asm("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(u), "m"(*reinterpret_cast<const int32_t *>(p)));
        return acc;
    }
    static inline I dpwssd(I acc, I a, I b) { return _mm512_dpwssd_epi32(acc, a, b); }
    // The low 16 bits of a's and b's int32 lanes as int16 pairs (a, b): scaled_subblock_sums'
    // kPaired.
    static constexpr bool kPairSums = true;
    static inline I pack_lo16(I a, I b) {
        return _mm512_mask_blend_epi16(0xAAAAAAAA, a, _mm512_slli_epi32(b, 16));
    }
    // 16 rows' 32 bytes as 8 panels: simd/rows16_layout.h's dense_b (defined there).
    static inline void dense(const __m256i w[16], I P[8]);
    static inline F cvtph(const uint16_t *h) { return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i *>(h))); }
    // Rows k, k + 4, k + 8, k + 12's 16 bytes at off in the four 128-bit lanes.
    static inline I rows4(const uint8_t *const p[], size_t off, int k) {
        __m512i v = _mm512_castsi128_si512(load128(p[k] + off));
        v = _mm512_inserti32x4(v, load128(p[k + 4] + off), 1);
        v = _mm512_inserti32x4(v, load128(p[k + 8] + off), 2);
        return _mm512_inserti32x4(v, load128(p[k + 12] + off), 3);
    }
};

// The 16 bytes at p[r] + off of 16 rows, transposed by dwords: t[g] lane r = row r's dword g.
inline void transpose16x4(const uint8_t *const p[kPanelRows], size_t off, __m512i t[4]) {
    panel_transpose<Vec512>(p, off, t);
}

// The fp16 at p[r] + off of 16 rows as one f32 vector (lane r = row r).
inline __m512 fp16_rows(const uint8_t *const p[kPanelRows], size_t off = 0) { return panel_fp16<Vec512>(p, off); }

// A format's 16-row panel (simd/panel_driver.h's P on Vec512).
template <class F>
struct Panel;

// The driver over the formats' 16-row panels.
template <class F>
struct PanelRowsPath : PanelDriver<F, Vec512, Panel<F>> {};

}  // namespace memra::simd::MEMRA_SIMD_NS
