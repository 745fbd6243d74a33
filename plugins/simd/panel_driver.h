// The rows path on VNNI panels (issue 26 item 3: lanes over outputs), written once over a panel
// vector V: the AVX-512 builds' 16-row panels (V = Vec512, simd/wide512_panel_driver.h) and the
// 256-bit builds' 8-row panels (V = Vec256, simd/panels256.h). The formats' panels paired with
// Q8_0 activations are in simd/panels_q8_0_act.h; the super-block formats' (AVX-512 only) in
// simd/wide512_panels_q8_K.h and simd/wide512_panels_chunks.h.
//
// Each weight block of V::kRows consecutive rows is decoded ONCE into panels: panel g holds, in
// its dword lane r, row r's unsigned bytes 4g..4g+3 of a run of 32 values (on 512 bits the layout
// of an AMX B tile: K = 32 bytes, 16 columns). Then, for each of the m activations, one dot4
// (vpdpbusd, or the ISA layer's exact equivalent) per 4 values (panel g x the activation's dword g
// broadcast from memory) gives the rows' exact partial sums in one register; a scale block's sums
// are completed in integers (an offset start, sub-block multipliers), converted once and fma'd
// with the rows' weight scales x the activation's scale: no horizontal reduction, one cvt + one
// fma per (rows, activation, term). The float chain of every output is the canonical order v2
// (formats spec §5.3), the one the token path and the scalar reference compute, so a rows call
// stays bit-identical to token calls (batch invariance).
//
// The activation side of a block (its scale as f32, offset starts or min sums) is prepared once
// per call and activation into a table on the stack (kPanelTableBytes); when m x blocks do not
// fit, the activations are taken in slices, each a pass over the rows (each output's chain is
// unchanged).
//
// A panel vector V provides kRows, I / F (its int and float registers), the int ops the decoders
// use (set1_epi8, set1_epi32, bcast32 from memory, and_, or_, xor_, srli4 (16-bit shift by 4),
// shifts of 16- and 32-bit lanes (srlv_epi32: per lane), add / sub / mullo of int32, mullo of
// int16, shuffle_epi8, add_epi8, sub_epi8, abs_epi8, broadcast128), dot4(acc, u, s) (exact
// u8 x s8 sums per dword), dpwssd(acc, a, b)
// (int16 pair products summed per dword), dense (kRows rows' 32 bytes as 8 panels), the float ops (zero, cvt, mul, fma, set1_ps, load_ps, storeu, cvtph of kRows fp16) and the
// transpose's pieces (rows4, unpack lo/hi of 32 and 64 bits); MEMRA_PANEL_VEC_OPS writes those
// that differ between widths by name only.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "simd/common.h"
#include "simd/next_tile_prefetch.h"

namespace memra::simd::MEMRA_SIMD_NS {

// The panel path pays one decode and transpose per panel of rows and block; from m = 4 on it beat
// the tiles it replaced in every format measured, at m = 2 the two were within the noise of the
// shared Zen 5 VM (plugins/simd/README.md).
constexpr int32_t kPanelMinM = 2;

// The activation side of the blocks is prepared once per call into a table on the stack: each
// format's Act (the offset starts and d_a of one weight block's activation bytes).
constexpr size_t kPanelTableBytes = 64 * 1024;

inline int32_t load_i32(const uint8_t *p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

// The ops of a panel vector whose intrinsics differ between widths only by their prefix P
// (_mm256, _mm512) and integer suffix SI (si256, si512): written once for Vec256 and Vec512,
// inside their struct (I and F declared before).
#define MEMRA_PANEL_VEC_OPS(P, SI)                                                  \
    static inline I set1_epi8(char v) { return P##_set1_epi8(v); }                  \
    static inline I set1_epi32(int32_t v) { return P##_set1_epi32(v); }             \
    static inline I bcast32(const uint8_t *p) { return P##_set1_epi32(load_i32(p)); } \
    static inline I and_(I a, I b) { return P##_and_##SI(a, b); }                   \
    static inline I xor_(I a, I b) { return P##_xor_##SI(a, b); }                   \
    static inline I srli4(I a) { return P##_srli_epi16(a, 4); }                     \
    static inline I shuffle_epi8(I table, I idx) { return P##_shuffle_epi8(table, idx); } \
    static inline I add_epi8(I a, I b) { return P##_add_epi8(a, b); }               \
    static inline I sub_epi8(I a, I b) { return P##_sub_epi8(a, b); }               \
    static inline I srlv_epi32(I a, I n) { return P##_srlv_epi32(a, n); }           \
    static inline I zero_i() { return P##_setzero_##SI(); }                         \
    static inline I abs_epi8(I a) { return P##_abs_epi8(a); }                       \
    static inline I or_(I a, I b) { return P##_or_##SI(a, b); }                     \
    static inline I add_epi32(I a, I b) { return P##_add_epi32(a, b); }             \
    static inline I sub_epi32(I a, I b) { return P##_sub_epi32(a, b); }             \
    static inline I mullo_epi32(I a, I b) { return P##_mullo_epi32(a, b); }         \
    static inline I mullo_epi16(I a, I b) { return P##_mullo_epi16(a, b); }         \
    static inline I slli_epi16(I a, unsigned n) { return P##_slli_epi16(a, n); }    \
    static inline I srli_epi16(I a, unsigned n) { return P##_srli_epi16(a, n); }    \
    static inline I srai_epi16(I a, unsigned n) { return P##_srai_epi16(a, n); }    \
    static inline I slli_epi32(I a, unsigned n) { return P##_slli_epi32(a, n); }    \
    static inline I srli_epi32(I a, unsigned n) { return P##_srli_epi32(a, n); }    \
    static inline I srai_epi32(I a, unsigned n) { return P##_srai_epi32(a, n); }    \
    static inline F zero() { return P##_setzero_ps(); }                             \
    static inline F cvt(I v) { return P##_cvtepi32_ps(v); }                         \
    static inline F mul(F a, F b) { return P##_mul_ps(a, b); }                      \
    static inline F fma(F a, F b, F c) { return P##_fmadd_ps(a, b, c); }            \
    static inline F set1_ps(float v) { return P##_set1_ps(v); }                     \
    static inline F load_ps(const float *v) { return P##_load_ps(v); }              \
    static inline void storeu(float *y, F v) { P##_storeu_ps(y, v); }               \
    static inline I unpacklo32(I a, I b) { return P##_unpacklo_epi32(a, b); }       \
    static inline I unpackhi32(I a, I b) { return P##_unpackhi_epi32(a, b); }       \
    static inline I unpacklo64(I a, I b) { return P##_unpacklo_epi64(a, b); }       \
    static inline I unpackhi64(I a, I b) { return P##_unpackhi_epi64(a, b); }

// The transpose's in-lane part: z[k] as V::rows4 loads it (rows k, k + 4, ... in its 128-bit
// lanes; a decoder may rework each row's 16 bytes in place first, as Q4_K's scales).
template <class V>
inline void panel_transpose_rows4(const typename V::I z[4], typename V::I t[4]) {
    const typename V::I a = V::unpacklo32(z[0], z[1]), b = V::unpackhi32(z[0], z[1]);
    const typename V::I c = V::unpacklo32(z[2], z[3]), d = V::unpackhi32(z[2], z[3]);
    t[0] = V::unpacklo64(a, c), t[1] = V::unpackhi64(a, c);
    t[2] = V::unpacklo64(b, d), t[3] = V::unpackhi64(b, d);
}

// The 16 bytes at p[r] + off of V::kRows rows, transposed by dwords: t[g] lane r = row r's dword
// g. z[k] holds rows k, k + 4, k + 8, ... in its 128-bit lanes; a 4 x 4 dword transpose inside
// each 128-bit lane then leaves lane L of t[g] = rows 4L .. 4L + 3, i.e. dword r = row r.
template <class V>
inline void panel_transpose(const uint8_t *const p[], size_t off, typename V::I t[4]) {
    typename V::I z[4];
    for (int k = 0; k < 4; ++k) z[k] = V::rows4(p, off, k);
    panel_transpose_rows4<V>(z, t);
}

// The fp16 at p[r] + off of V::kRows rows as one f32 vector (lane r = row r).
template <class V>
inline typename V::F panel_fp16(const uint8_t *const p[], size_t off = 0) {
    alignas(32) uint16_t h[V::kRows];
    for (int r = 0; r < V::kRows; ++r) std::memcpy(&h[r], p[r] + off, 2);
    return V::cvtph(h);
}

// The f32 that get(r) gives for each of V::kRows rows as one vector (lane r = row r).
template <class V, class Get>
inline typename V::F panel_f32(Get get) {
    alignas(64) float v[V::kRows];
    for (int r = 0; r < V::kRows; ++r) v[r] = get(r);
    return V::load_ps(v);
}

// A nibble format's panel (Q4_0, MXFP4, IQ4_XS's sub-blocks: byte j of qs = element j lo, j + 16 hi): t[g]'s low
// nibbles are elements 4g .. 4g + 3, its high nibbles 16 + 4g .. 16 + 4g + 3.
template <class V>
inline void nibble_panel(const uint8_t *const p[], size_t qs, typename V::I P[8]) {
    typename V::I t[4];
    panel_transpose<V>(p, qs, t);
    const typename V::I m4 = V::set1_epi8(0x0F);
    for (int g = 0; g < 4; ++g) {
        P[g] = V::and_(t[g], m4);
        P[4 + g] = V::and_(V::srli4(t[g]), m4);
    }
}

// A format's panel P on V (PanelOf<F, V>, specialized by simd/panels_q8_0_act.h,
// simd/panels_q8_K_act.h and simd/panels_chunks.h): Weights (the rows' blocks decoded: panels of
// unsigned w + K, and their weight scales) from decode(p[kRows], Weights &), Act (one
// activation's side of a weight block: offset starts, d_a) from act(a), and apply(acc, w, t, xb,
// xq_stride, ms): the block's terms of activations 0 .. ms - 1 (t: their Acts; xb: activation
// 0's block) added to their accumulators in the canonical order.
template <class F, class V>
struct PanelOf;

// apply for a format whose Derived::step does one activation.
template <class Derived>
struct PerActivation {
    template <class Acc, class Weights, class Act>
    static inline void apply(Acc *acc, const Weights &w, const Act *t, const uint8_t *xb, size_t xq_stride,
                             int32_t ms) {
        for (int32_t j = 0; j < ms; ++j) Derived::step(acc[j], w, t[j], xb + size_t(j) * xq_stride);
    }
};

// The driver of format F's panel P on vector V.
template <class F, class V, class P>
struct PanelDriver {
    static constexpr int kRows = V::kRows;
    using Act = typename P::Act;
    static constexpr int32_t kTableEntries = int32_t(kPanelTableBytes / sizeof(Act));

    // The table of activations [0, ms) of the slice for every block: entry b * ms + j.
    static inline void prepare(Act *tab, const uint8_t *x, size_t xq_stride, int32_t ms, int32_t nb) {
        for (int32_t j = 0; j < ms; ++j)
            for (int32_t b = 0; b < nb; ++b)
                tab[size_t(b) * size_t(ms) + size_t(j)] = P::act(x + size_t(j) * xq_stride + size_t(b) * F::kActBytes);
    }

    // kRows rows x ms activations, every block: y[j * ldy + r]. `next`: the next tile's rows (the
    // kRows * row_bytes bytes right after this tile's), or nullptr.
    static inline void tile(const uint8_t *w, size_t row_bytes, int32_t nb, const uint8_t *x, size_t xq_stride,
                            int32_t ms, const Act *tab, float *y, size_t ldy, const uint8_t *next) {
        typename V::F acc[kMaxM];
        for (int32_t j = 0; j < ms; ++j) acc[j] = V::zero();
        const uint8_t *p[kRows];
        NextTilePrefetch next_tile(next, size_t(kRows) * row_bytes, nb);
        for (int32_t b = 0; b < nb; ++b) {
            for (int r = 0; r < kRows; ++r) {
                p[r] = w + size_t(r) * row_bytes + size_t(b) * F::kBytes;
                _mm_prefetch(reinterpret_cast<const char *>(p[r] + prefetch_bytes<F>()), _MM_HINT_T0);
            }
            next_tile.share(b, 0);
            typename P::Weights wb;
            P::decode(p, wb);
            next_tile.share(b, 1);
            const Act *t = tab + size_t(b) * size_t(ms);
            const uint8_t *xb = x + size_t(b) * F::kActBytes;
            P::apply(acc, wb, t, xb, xq_stride, ms);
        }
        for (int32_t j = 0; j < ms; ++j) V::storeu(y + size_t(j) * ldy, acc[j]);
    }

    // The rows [0, kRows * (rows / kRows)) of the call; returns how many were done (0 when the
    // call is not for panels: fewer activations than min_m, or a row too long for one
    // activation's table). min_m 1: a token path through the panels (common.h TokenByPanels).
    static inline int32_t gemm(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const uint8_t *x,
                               size_t xq_stride, int32_t m, float *y, size_t ldy, int32_t min_m = kPanelMinM) {
        const int32_t nb = n / F::kElems;
        const int32_t panel_rows = rows / kRows * kRows;
        if (m < min_m || panel_rows == 0 || nb == 0 || nb > kTableEntries) return 0;
        const int32_t slice = kTableEntries / nb;
        Act tab[kTableEntries];
        for (int32_t j0 = 0; j0 < m; j0 += slice) {
            const int32_t ms = m - j0 < slice ? m - j0 : slice;
            const uint8_t *xs = x + size_t(j0) * xq_stride;
            prepare(tab, xs, xq_stride, ms, nb);
            for (int32_t r = 0; r < panel_rows; r += kRows) {
                const uint8_t *rows_w = w + size_t(r) * row_bytes;
                tile(rows_w, row_bytes, nb, xs, xq_stride, ms, tab, y + size_t(j0) * ldy + r, ldy,
                     r + kRows < panel_rows ? rows_w + size_t(kRows) * row_bytes : nullptr);
            }
        }
        return panel_rows;
    }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
