// The AVX-512 build's pair forms of the 32-element formats, included by simd/formats_q8_0_act.h
// only where the ISA selection defines MEMRA_SIMD_WIDE512:
//  - the token path of Q8_0, Q4_0 and MXFP4 on row pairs (TokenRowPairs): a tile's 4 rows as two
//    512-bit registers (row r in the low half, row r + 1 in the high half), so one decode and one
//    vpdpbusd serve two rows, two blocks per step (NVFP4's: simd/wide512_nvfp4_token.h);
//  - the rows path (RowsPath) of Q8_0, Q4_0, MXFP4 and NVFP4 on activation pairs after the panels: 8 rows x
//    activations j and j + 1, one vpdpbusd per (row, activation pair, 32 values).
// The int lanes are then summed exactly into one vector of block sums per (rows, activations)
// (an integer shuffle tree), converted once and fma'd with the matching d_w * d_a: the float side
// of simd/row_sums.h, so the results are those of every other build.
#pragma once

#include <immintrin.h>

#include <cstring>
#include <type_traits>

#include "simd/formats_q8_0_act.h"
#include "simd/tuning.h"
#include "simd/wide512_panels.h"

namespace memra::simd::MEMRA_SIMD_NS {

// [a0+a1, a2+a3, b0+b1, b2+b3] in every 128-bit lane, as vphaddd does on 256 bits.
inline __m512i hadd512(__m512i a, __m512i b) {
    const __m512 fa = _mm512_castsi512_ps(a), fb = _mm512_castsi512_ps(b);
    return _mm512_add_epi32(_mm512_castps_si512(_mm512_shuffle_ps(fa, fb, 0x88)),
                            _mm512_castps_si512(_mm512_shuffle_ps(fa, fb, 0xDD)));
}

// A = [row 0 lanes | row 1 lanes], B = [row 2 | row 3] -> [S0, S1, S2, S3].
inline __m128i row_pair_sums(__m512i A, __m512i B) {
    const __m512i h = hadd512(A, B);   // lane k: [A_k pairs, B_k pairs]
    const __m512i q = hadd512(h, h);   // lane k: [A_k quad, B_k quad, A_k quad, B_k quad]
    const __m512i t = _mm512_add_epi32(q, _mm512_shuffle_i64x2(q, q, 0xB1));  // lane 0: rows 0, 2; lane 2: rows 1, 3
    return _mm_unpacklo_epi32(_mm512_castsi512_si128(t), _mm512_extracti32x4_epi32(t, 2));
}

inline uint16_t fp16_bits(const uint8_t *p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return h;
}

// Two blocks' [S(r, b), S(r, b + 1)] of 4 rows from their row-pair lanes (A = rows 0 | 1 and
// B = rows 2 | 3 against block b, C and D against b + 1): one tree for both blocks, where a block
// alone paid 10 of the tree's 14 ops. s0 = [S(0..3, b)], s1 = [S(0..3, b + 1)].
inline void row_pair_sums2(__m512i A, __m512i B, __m512i C, __m512i D, __m128i &s0, __m128i &s1) {
    const __m512i q = hadd512(hadd512(A, B), hadd512(C, D));  // lane k: quads of A, B, C, D
    const __m512i t = _mm512_add_epi32(q, _mm512_shuffle_i64x2(q, q, 0xB1));  // lane 0: rows 0, 2; lane 2: rows 1, 3
    const __m128i even = _mm512_castsi512_si128(t), odd = _mm512_extracti32x4_epi32(t, 2);
    s0 = _mm_unpacklo_epi32(even, odd);
    s1 = _mm_unpackhi_epi32(even, odd);
}

// The 16-bit words at word offsets 0 and W of four rows' blocks (p[r]: row r's block b), as
// [word 0 of rows 0-3, word W of rows 0-3]: for a block of 2W bytes, the leading fields of blocks
// b and b + 1. One load per row that stays within the two blocks (32 bytes where W < 16, else
// 64), two word permutes and one unpack, where 8 scalar loads and inserts cost 16 or more uops.
template <int W>
inline __m128i lead_words2(const uint8_t *const p[4]) {
    static_assert(W >= 8 && W < 32, "blocks of 16 to 63 bytes");
    __m128i r01, r23;  // [r0 b, r1 b, r0 b+1, r1 b+1], [r2 b, r3 b, r2 b+1, r3 b+1]
    if constexpr (W < 16) {
        const __m256i idx = _mm256_setr_epi16(0, 16, W, 16 + W, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
        r01 = _mm256_castsi256_si128(_mm256_permutex2var_epi16(load256(p[0]), idx, load256(p[1])));
        r23 = _mm256_castsi256_si128(_mm256_permutex2var_epi16(load256(p[2]), idx, load256(p[3])));
    } else {
        const __m512i idx = _mm512_zextsi128_si512(_mm_setr_epi16(0, 32, W, 32 + W, 0, 0, 0, 0));
        r01 = _mm512_castsi512_si128(_mm512_permutex2var_epi16(_mm512_loadu_si512(p[0]), idx, _mm512_loadu_si512(p[1])));
        r23 = _mm512_castsi512_si128(_mm512_permutex2var_epi16(_mm512_loadu_si512(p[2]), idx, _mm512_loadu_si512(p[3])));
    }
    return _mm_unpacklo_epi32(r01, r23);
}

// Q8_0 and Q4_0: the fp16 d leading each block.
template <size_t kBytes>
struct Fp16LeadScales {
    static_assert(kBytes % 2 == 0, "word-aligned blocks");
    static inline __m128 scales(const uint8_t *const p[4]) {
        return _mm_cvtph_ps(_mm_setr_epi16(short(fp16_bits(p[0])), short(fp16_bits(p[1])), short(fp16_bits(p[2])),
                                           short(fp16_bits(p[3])), 0, 0, 0, 0));
    }
    static inline __m256 scales2(const uint8_t *const p[4]) { return _mm256_cvtph_ps(lead_words2<kBytes / 2>(p)); }
};

// The token path of a tile of 4 rows (simd/common.h TokenRowPairs) for a Block32 format whose
// P gives pair(p0, p1): the unsigned bytes w + K of rows p0 and p1 in one register, and the four
// rows' block scales d_w: scales(p) of block b, scales2(p) of blocks b and b + 1. Two blocks per
// step share one reduction tree, one scale load and the prefetches (a block is 17-34 bytes); the
// fmas stay one per block in block order.
template <class F, class P>
struct RowPairsTokenTile {
    static constexpr bool kEnabled = true;
    static bool chosen() { return true; }
    static inline void tile(float acc_io[4], const uint8_t *w, size_t row_bytes, int32_t b0, int32_t b1,
                            const typename F::Act *x) {
        __m128 acc = _mm_loadu_ps(acc_io);
        PrefetchAhead<F, 4> prefetch(b0, row_bytes);
        const uint8_t *p[4];
        int32_t b = b0;
        for (; b + 2 <= b1; b += 2) {
            const size_t ahead = prefetch.at_block(b);
            for (int r = 0; r < 4; ++r) {
                p[r] = w + size_t(r) * row_bytes + size_t(b) * F::kBytes;
                prefetch_block_pair<F>(p[r], ahead);
            }
            const typename F::Act &x0 = x[b - b0], &x1 = x[b + 1 - b0];
            const __m512i a0 = _mm512_broadcast_i64x4(x0.a), base0 = _mm512_broadcast_i64x4(x0.base);
            const __m512i a1 = _mm512_broadcast_i64x4(x1.a), base1 = _mm512_broadcast_i64x4(x1.base);
            const __m512i A = _mm512_dpbusd_epi32(base0, P::pair(p[0], p[1]), a0);
            const __m512i B = _mm512_dpbusd_epi32(base0, P::pair(p[2], p[3]), a0);
            const __m512i C = _mm512_dpbusd_epi32(base1, P::pair(p[0] + F::kBytes, p[1] + F::kBytes), a1);
            const __m512i D = _mm512_dpbusd_epi32(base1, P::pair(p[2] + F::kBytes, p[3] + F::kBytes), a1);
            __m128i s0, s1;
            row_pair_sums2(A, B, C, D, s0, s1);
            const __m256 d = _mm256_mul_ps(P::scales2(p), _mm256_set_m128(_mm_set1_ps(x1.d), _mm_set1_ps(x0.d)));
            acc = _mm_fmadd_ps(_mm_cvtepi32_ps(s0), _mm256_castps256_ps128(d), acc);
            acc = _mm_fmadd_ps(_mm_cvtepi32_ps(s1), _mm256_extractf128_ps(d, 1), acc);
        }
        if (b < b1) {  // an odd last block
            for (int r = 0; r < 4; ++r) p[r] = w + size_t(r) * row_bytes + size_t(b) * F::kBytes;
            const typename F::Act &xa = x[b - b0];
            const __m512i a = _mm512_broadcast_i64x4(xa.a), base = _mm512_broadcast_i64x4(xa.base);
            const __m512i A = _mm512_dpbusd_epi32(base, P::pair(p[0], p[1]), a);
            const __m512i B = _mm512_dpbusd_epi32(base, P::pair(p[2], p[3]), a);
            acc = _mm_fmadd_ps(_mm_cvtepi32_ps(row_pair_sums(A, B)), _mm_mul_ps(P::scales(p), _mm_set1_ps(xa.d)), acc);
        }
        _mm_storeu_ps(acc_io, acc);
    }
};

struct Q8_0RowPair : Fp16LeadScales<Q8_0::kBytes> {  // w + 128 as unsigned
    static_assert(kQ8_0Offset == 128, "the pair form is the offset form");
    static inline __m512i pair(const uint8_t *p0, const uint8_t *p1) {
        const __m512i w = _mm512_inserti64x4(_mm512_castsi256_si512(load256(p0 + 2)), load256(p1 + 2), 1);
        return _mm512_xor_si512(w, _mm512_set1_epi8(char(0x80)));
    }
};

// Two rows' 16 nibble bytes at q0, q1 as [lo nibbles | hi nibbles] per row: elements 0-31 in order.
inline __m512i nibble_pair(const uint8_t *q0, const uint8_t *q1) {
    const __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_broadcastsi128_si256(load128(q0))),
                                         _mm256_broadcastsi128_si256(load128(q1)), 1);
    return _mm512_and_si512(_mm512_srlv_epi64(q, _mm512_setr_epi64(0, 0, 4, 4, 0, 0, 4, 4)), _mm512_set1_epi8(0x0F));
}

struct Q4_0RowPair : Fp16LeadScales<Q4_0::kBytes> {  // the nibbles, q + 8
    static inline __m512i pair(const uint8_t *p0, const uint8_t *p1) { return nibble_pair(p0 + 2, p1 + 2); }
};

// MXFP4: the nibbles looked up as kvalues_fp4 + 12 (0..24); d_w = e8m0_half(e), e the block's
// first byte. Blocks are 17 bytes: e(b) is the low byte of word 0, e(b + 1) the high byte of word 8.
struct MXFP4RowPair {
    static inline __m512i pair(const uint8_t *p0, const uint8_t *p1) {
        const __m512i table = _mm512_add_epi8(_mm512_broadcast_i32x4(load128(kValuesFp4)), _mm512_set1_epi8(MXFP4::kOffset));
        return _mm512_shuffle_epi8(table, nibble_pair(p0 + 1, p1 + 1));
    }
    static inline __m128 scales(const uint8_t *const p[4]) {
        return _mm_setr_ps(kE8m0Half.v[p[0][0]], kE8m0Half.v[p[1][0]], kE8m0Half.v[p[2][0]], kE8m0Half.v[p[3][0]]);
    }
    // e8m0_half(e) = 2^(e - 128): (e - 1) << 23 as float bits for e >= 2, the subnormal 0x00200000 << e below.
    static inline __m256 scales2(const uint8_t *const p[4]) {
        const __m256i words = _mm256_cvtepu16_epi32(lead_words2<8>(p));
        const __m256i e = _mm256_and_si256(_mm256_srlv_epi32(words, _mm256_setr_epi32(0, 0, 0, 0, 8, 8, 8, 8)),
                                           _mm256_set1_epi32(0xFF));
        const __m256i normal = _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
        const __m256i subnormal = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), e);
        const __mmask8 is_normal = _mm256_cmpge_epu32_mask(e, _mm256_set1_epi32(2));
        return _mm256_castsi256_ps(_mm256_mask_blend_epi32(is_normal, subnormal, normal));
    }
};

// The rows path of a Block32 format (offset form) on 8 rows x activation pairs: z[r] = row r's
// lanes against [activation j | activation j + 1]; the 16 block sums come out as
// [rows 0-3 of j, rows 0-3 of j + 1, rows 4-7 of j, rows 4-7 of j + 1], one zmm accumulator per
// activation pair. An odd m pairs the last activation with itself; that half is dropped.
// lo: the sums of lanes 0-3 of each 256-bit half, hi: of lanes 4-7 (NVFP4's two sub-blocks);
// their sum is the whole block's.
inline void pair_rows_half_sums(const __m512i z[8], __m512i &lo, __m512i &hi) {
    const __m512i x = hadd512(hadd512(z[0], z[1]), hadd512(z[2], z[3]));  // lane k: rows 0-3, 128-bit lane k of each
    const __m512i y = hadd512(hadd512(z[4], z[5]), hadd512(z[6], z[7]));
    lo = _mm512_shuffle_i64x2(x, y, _MM_SHUFFLE(2, 0, 2, 0));
    hi = _mm512_shuffle_i64x2(x, y, _MM_SHUFFLE(3, 1, 3, 1));
}
inline __m512i pair_rows_sums(const __m512i z[8]) {
    __m512i lo, hi;
    pair_rows_half_sums(z, lo, hi);
    return _mm512_add_epi32(lo, hi);
}
inline __m512 quad_lanes(__m128 lo, __m128 hi) {  // [lo, lo, hi, hi]
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_set_m128(lo, lo)), _mm256_set_m128(hi, hi), 1);
}

// [a0 x 4, a1 x 4, a0 x 4, a1 x 4]: the activation scales in the layout of pair_rows_sums.
inline __m512 d_a_pair(float a0, float a1) {
    const __m256 d = _mm256_set_m128(_mm_set1_ps(a1), _mm_set1_ps(a0));
    return _mm512_insertf32x8(_mm512_castps256_ps512(d), d, 1);
}
// The lanes of one row's 32 bytes w (broadcast to both halves) against [activation j | j + 1].
template <int K>
inline __m512i dot_pair(__m512i w, const ActOffset<K> &x0, const ActOffset<K> &x1) {
    const __m512i a = _mm512_inserti64x4(_mm512_castsi256_si512(x0.a), x1.a, 1);
    const __m512i base = _mm512_inserti64x4(_mm512_castsi256_si512(x0.base), x1.base, 1);
    return _mm512_dpbusd_epi32(base, w, a);
}

template <class F>
struct PairsRowsPath {
    static constexpr bool kEnabled = true;
    // NVFP4: per half h of the block, the lanes 0-3 / 4-7 of each row are sub-blocks 2h / 2h + 1,
    // fma'd in sub-block order with ue4m3_half(d[s]) * d_a of Q8_0 block 2b + h.
    static inline void step_nvfp4(__m512 *acc, const NVFP4::Block blk[8], const uint8_t *xb, size_t xq_stride,
                                  int32_t m) {
        __m512 d_w[4];
        for (int s = 0; s < 4; ++s)
            d_w[s] = quad_lanes(_mm_setr_ps(blk[0].s[s], blk[1].s[s], blk[2].s[s], blk[3].s[s]),
                                _mm_setr_ps(blk[4].s[s], blk[5].s[s], blk[6].s[s], blk[7].s[s]));
        for (int32_t q = 0; q < (m + 1) / 2; ++q) {
            const int32_t j1 = 2 * q + 1 < m ? 2 * q + 1 : 2 * q;
            const NVFP4::Act x0 = NVFP4::act(xb + size_t(2 * q) * xq_stride), x1 = NVFP4::act(xb + size_t(j1) * xq_stride);
            for (int h = 0; h < 2; ++h) {
                __m512i z[8], lo, hi;
                for (int r = 0; r < 8; ++r) z[r] = dot_pair(_mm512_broadcast_i64x4(blk[r].w[h]), x0.h[h], x1.h[h]);
                pair_rows_half_sums(z, lo, hi);
                const __m512 d_a = d_a_pair(x0.h[h].d, x1.h[h].d);
                acc[q] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(lo), _mm512_mul_ps(d_w[2 * h], d_a), acc[q]);
                acc[q] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(hi), _mm512_mul_ps(d_w[2 * h + 1], d_a), acc[q]);
            }
        }
    }
    static inline void tile8(const uint8_t *w, size_t row_bytes, int32_t n, const uint8_t *xq, size_t xq_stride,
                             int32_t m, float *y, size_t ldy) {
        const int32_t pairs = (m + 1) / 2;
        __m512 acc[kMaxM / 2];
        for (int32_t q = 0; q < pairs; ++q) acc[q] = _mm512_setzero_ps();
        typename F::Block blk[8];
        const int32_t nb = n / F::kElems;
        for (int32_t b = 0; b < nb; ++b) {
            decode_rows<F, 8>(w, row_bytes, b, blk);
            const uint8_t *xb = xq + size_t(b) * F::kActBytes;
            if constexpr (std::is_same_v<F, NVFP4>) {
                step_nvfp4(acc, blk, xb, xq_stride, m);
            } else {
                __m512i wz[8];
                for (int r = 0; r < 8; ++r) wz[r] = _mm512_broadcast_i64x4(blk[r].w);
                const __m512 d_w = quad_lanes(_mm_setr_ps(blk[0].d, blk[1].d, blk[2].d, blk[3].d),
                                              _mm_setr_ps(blk[4].d, blk[5].d, blk[6].d, blk[7].d));
                for (int32_t q = 0; q < pairs; ++q) {
                    const int32_t j1 = 2 * q + 1 < m ? 2 * q + 1 : 2 * q;
                    const typename F::Act x0 = F::act(xb + size_t(2 * q) * xq_stride);
                    const typename F::Act x1 = F::act(xb + size_t(j1) * xq_stride);
                    __m512i z[8];
                    for (int r = 0; r < 8; ++r) z[r] = dot_pair(wz[r], x0, x1);
                    acc[q] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(pair_rows_sums(z)), _mm512_mul_ps(d_w, d_a_pair(x0.d, x1.d)),
                                             acc[q]);
                }
            }
        }
        for (int32_t q = 0; q < pairs; ++q) {
            alignas(64) float out[16];
            _mm512_store_ps(out, acc[q]);
            for (int h = 0; h < 2; ++h) {  // h: activation 2q + h
                if (2 * q + h >= m) break;
                float *row = y + size_t(2 * q + h) * ldy;
                for (int r = 0; r < 4; ++r) row[r] = out[4 * h + r], row[4 + r] = out[8 + 4 * h + r];
            }
        }
    }
    static inline void gemm(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const uint8_t *x,
                            size_t xq_stride, int32_t m, float *y, size_t ldy) {
        int32_t r = 0;
        r = PanelRowsPath<F>::gemm(w, row_bytes, rows, n, x, xq_stride, m, y, ldy);
        for (; r + 8 <= rows; r += 8) tile8(w + size_t(r) * row_bytes, row_bytes, n, x, xq_stride, m, y + r, ldy);
        gemm_tail<F>(w, row_bytes, r, rows, n, x, xq_stride, m, y, ldy);
    }
};

template <class F>
struct RowsPath<F, std::enable_if_t<kOneOf<F, Q8_0, Q4_0, MXFP4, NVFP4>>> : PairsRowsPath<F> {};

// Q8_0 keeps its row pairs off on Intel: on the Sapphire Rapids host its 4-row tiles block by
// block read 1.07x faster at 1 thread and 1.06x at 2 (token calls from DRAM, three alternating
// rounds, 2026-12-06: 17.0 vs 15.9 GB/s, 32.8 vs 30.9), even at 16; on the Zen 5 VM the row
// pairs read 1.1-1.5x faster (six rounds: 28.5-32.4 vs 18.5-31.8 GB/s at 1 thread, 52-61 vs
// 44-50 at 2). docs/benchmarks.md "The Intel host again (2026-12-06)".
template <>
struct TokenRowPairs<Q8_0> : RowPairsTokenTile<Q8_0, Q8_0RowPair> {
    static bool chosen() { return !tuned_for(MEMRA_TUNING_INTEL); }
};
template <>
struct TokenRowPairs<Q4_0> : RowPairsTokenTile<Q4_0, Q4_0RowPair> {};
template <>
struct TokenRowPairs<MXFP4> : RowPairsTokenTile<MXFP4, MXFP4RowPair> {};

}  // namespace memra::simd::MEMRA_SIMD_NS
#include "simd/wide512_nvfp4_token.h"  // NVFP4's token path on row pairs
