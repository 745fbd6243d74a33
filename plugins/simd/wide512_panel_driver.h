// The AVX-512 build's rows path on VNNI panels of 16 output rows (issue 26 item 3: lanes over
// outputs): the driver and what the formats' panels share. The formats' panels are in
// simd/wide512_panels.h (Q8_0, Q4_0, MXFP4, NVFP4) and simd/wide512_panels_q8_K.h (Q4_K, Q5_K, Q6_K).
//
// Each weight block of 16 consecutive rows is decoded ONCE into panels: panel g holds, in its
// dword lane r, row r's unsigned bytes 4g..4g+3 of a run of 32 values - the layout of an AMX B
// tile (K = 32 bytes, 16 columns), so an AMX path can later load the same panels. Then, for each
// of the m activations, one vpdpbusd per 4 values (panel g x the activation's dword g broadcast
// from memory) gives the 16 rows' exact partial sums in one zmm; a scale block's sums are
// completed in integers (an offset start, sub-block multipliers), converted once and fma'd with
// the 16 rows' weight scales x the activation's scale: no horizontal reduction, one cvt + one
// fma per (16 rows, activation, term). The float chain of every output is the canonical order v2
// (formats spec §5.3), the one the token path and the scalar reference compute, so a rows call
// stays bit-identical to token calls (batch invariance).
//
// The activation side of a block (its scale as f32, offset starts or min sums) is prepared once
// per call and activation into a table on the stack (kPanelTableBytes); when m x blocks do not
// fit, the activations are taken in slices, each a pass over the rows (each output's chain is
// unchanged).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "simd/common.h"

namespace memra::simd::MEMRA_SIMD_NS {

constexpr int kPanelRows = 16;

// The panel path pays one decode and transpose per 16 rows and block; from m = 4 on it beat the
// activation-pair tiles of simd/wide512_q8_0_act.h in every format measured, at m = 2 the two
// were within the noise of the shared Zen 5 VM (plugins/simd/README.md).
constexpr int32_t kPanelMinM = 2;

// The activation side of the blocks is prepared once per call into a table on the stack: each
// format's Act (the offset starts and d_a of one weight block's activation bytes).
constexpr size_t kPanelTableBytes = 64 * 1024;

inline int32_t load_i32(const uint8_t *p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

// The 16 bytes at p[r] + off of 16 rows, transposed by dwords: t[g] lane r = row r's dword g.
// z[k] holds rows k, k + 4, k + 8, k + 12 in its 128-bit lanes; a 4 x 4 dword transpose inside
// each 128-bit lane then leaves lane L of t[g] = rows 4L .. 4L + 3, i.e. dword r = row r.
inline void transpose16x4(const uint8_t *const p[kPanelRows], size_t off, __m512i t[4]) {
    __m512i z[4];
    for (int k = 0; k < 4; ++k) {
        __m512i v = _mm512_castsi128_si512(load128(p[k] + off));
        v = _mm512_inserti32x4(v, load128(p[k + 4] + off), 1);
        v = _mm512_inserti32x4(v, load128(p[k + 8] + off), 2);
        z[k] = _mm512_inserti32x4(v, load128(p[k + 12] + off), 3);
    }
    const __m512i a = _mm512_unpacklo_epi32(z[0], z[1]), b = _mm512_unpackhi_epi32(z[0], z[1]);
    const __m512i c = _mm512_unpacklo_epi32(z[2], z[3]), d = _mm512_unpackhi_epi32(z[2], z[3]);
    t[0] = _mm512_unpacklo_epi64(a, c), t[1] = _mm512_unpackhi_epi64(a, c);
    t[2] = _mm512_unpacklo_epi64(b, d), t[3] = _mm512_unpackhi_epi64(b, d);
}

// The fp16 at p[r] + off of 16 rows as one f32 vector (lane r = row r).
inline __m512 fp16_rows(const uint8_t *const p[kPanelRows], size_t off = 0) {
    alignas(32) uint16_t h[kPanelRows];
    for (int r = 0; r < kPanelRows; ++r) std::memcpy(&h[r], p[r] + off, 2);
    return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i *>(h)));
}

// A format's panel: Weights (the 16 rows' blocks decoded: panels of unsigned w + K, and their
// weight scales) from decode(p[16], Weights &), Act (one activation's side of a weight block:
// offset starts, d_a) from act(a), and apply(acc, w, t, xb, xq_stride, ms): the block's terms of
// activations 0 .. ms - 1 (t: their Acts; xb: activation 0's block) added to their 16-row
// accumulators in the canonical order.
template <class F>
struct Panel;

// apply for a format whose Derived::step does one activation.
template <class Derived>
struct PerActivation {
    template <class Weights, class Act>
    static inline void apply(__m512 *acc, const Weights &w, const Act *t, const uint8_t *xb, size_t xq_stride,
                             int32_t ms) {
        for (int32_t j = 0; j < ms; ++j) Derived::step(acc[j], w, t[j], xb + size_t(j) * xq_stride);
    }
};

// The driver over the formats' panels.
template <class F>
struct PanelRowsPath {
    using Act = typename Panel<F>::Act;
    static constexpr int32_t kTableEntries = int32_t(kPanelTableBytes / sizeof(Act));

    // The table of activations [0, ms) of the slice for every block: entry b * ms + j.
    static inline void prepare(Act *tab, const uint8_t *x, size_t xq_stride, int32_t ms, int32_t nb) {
        for (int32_t j = 0; j < ms; ++j)
            for (int32_t b = 0; b < nb; ++b)
                tab[size_t(b) * size_t(ms) + size_t(j)] =
                    Panel<F>::act(x + size_t(j) * xq_stride + size_t(b) * F::kActBytes);
    }

    // 16 rows x ms activations, every block: y[j * ldy + r].
    static inline void tile16(const uint8_t *w, size_t row_bytes, int32_t nb, const uint8_t *x, size_t xq_stride,
                              int32_t ms, const Act *tab, float *y, size_t ldy) {
        __m512 acc[kMaxM];
        for (int32_t j = 0; j < ms; ++j) acc[j] = _mm512_setzero_ps();
        const uint8_t *p[kPanelRows];
        for (int32_t b = 0; b < nb; ++b) {
            for (int r = 0; r < kPanelRows; ++r) {
                p[r] = w + size_t(r) * row_bytes + size_t(b) * F::kBytes;
                _mm_prefetch(reinterpret_cast<const char *>(p[r] + prefetch_bytes<F>()), _MM_HINT_T0);
            }
            typename Panel<F>::Weights wb;
            Panel<F>::decode(p, wb);
            const Act *t = tab + size_t(b) * size_t(ms);
            const uint8_t *xb = x + size_t(b) * F::kActBytes;
            Panel<F>::apply(acc, wb, t, xb, xq_stride, ms);
        }
        for (int32_t j = 0; j < ms; ++j) _mm512_storeu_ps(y + size_t(j) * ldy, acc[j]);
    }

    // The rows [0, 16 * (rows / 16)) of the call; returns how many were done (0 when the call
    // is not for panels: too few activations, or a row too long for one activation's table).
    static inline int32_t gemm(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const uint8_t *x,
                               size_t xq_stride, int32_t m, float *y, size_t ldy) {
        const int32_t nb = n / F::kElems;
        const int32_t panel_rows = rows / kPanelRows * kPanelRows;
        if (m < kPanelMinM || panel_rows == 0 || nb == 0 || nb > kTableEntries) return 0;
        const int32_t slice = kTableEntries / nb;
        Act tab[kTableEntries];
        for (int32_t j0 = 0; j0 < m; j0 += slice) {
            const int32_t ms = m - j0 < slice ? m - j0 : slice;
            const uint8_t *xs = x + size_t(j0) * xq_stride;
            prepare(tab, xs, xq_stride, ms, nb);
            for (int32_t r = 0; r < panel_rows; r += kPanelRows)
                tile16(w + size_t(r) * row_bytes, row_bytes, nb, xs, xq_stride, ms, tab, y + size_t(j0) * ldy + r, ldy);
        }
        return panel_rows;
    }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
