// The AVX-512 build's VNNI panels (simd/wide512_panel_driver.h) of Q4_K, Q5_K and Q6_K, paired with
// Q8_K activations, and their rows path (panels of 16 rows first, the 4-row tiles of
// simd/common.h for the rest). Included by simd/wide512_q8_K_act.h.
//
// Q4_K (fp16 d | fp16 dmin | scales[12] | qs[128]), formats spec §5.3: per super-block the exact
// S = sum_j sc_j * sum_{i in sub-block j} q_i a_i and M = sum_j m_j (bs[2j] + bs[2j+1]), then
// acc = fmaf((float)S, D_a * d, acc) and acc = fmaf((float)M, -(D_a * dmin), acc). On panels:
// sub-block j (32 values, q unsigned 0..15: no offset) is 8 vpdpbusd per activation into the 16
// rows' sum, multiplied by the 16 rows' sc_j (vpmulld) and added to S; M is 4 vpdpwssd of the
// rows' mins as int16 pairs against the activation's T pairs. The sub-block loop runs outside the
// activation loop, so its 8 panels stay in registers for all m. Q5_K is the same with q 0..31,
// the fifth bit of each value from qh.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <type_traits>

#include "simd/formats_q8_K_act.h"
#include "simd/wide512_panel_driver.h"

namespace memra::simd::MEMRA_SIMD_NS {

// S[a] = sum_j sc[j] * (the 16 rows' dot of sub-block j against activation a's values), exact in
// int32, for the NSub sub-blocks of G dword groups each (P[j][g]: values E j + 4g .. + 3, E = 4G):
// the sub-block loop outside the activation loop, so its panels stay in registers for all m.
// kScaled = false: the panels hold weights already scaled (sc unused), S[a] is their plain dot.
template <int NSub, int G, bool kScaled = true>
inline void scaled_subblock_sums(__m512i *S, const __m512i (*P)[G], const __m512i *sc, const uint8_t *qs,
                                 size_t xq_stride, int32_t ms) {
    for (int j = 0; j < NSub; ++j) {
        __m512i p[G];
        for (int g = 0; g < G; ++g) p[g] = P[j][g];
        for (int32_t a = 0; a < ms; ++a) {
            const uint8_t *x = qs + size_t(a) * xq_stride + 4 * G * j;
            __m512i s = kScaled || j == 0 ? _mm512_setzero_si512() : S[a];
            for (int g = 0; g < G; ++g) s = _mm512_dpbusd_epi32(s, p[g], _mm512_set1_epi32(load_i32(x + 4 * g)));
            if constexpr (kScaled) {
                s = _mm512_mullo_epi32(s, sc[j]);
                S[a] = j == 0 ? s : _mm512_add_epi32(S[a], s);
            } else {
                S[a] = s;
            }
        }
    }
}

// Bytes (0, 1) and (2, 3) of every dword of t as int16 pairs, zero-extended (Signed = false) or
// sign-extended: vpshufb puts each byte in the low (or, for the sign, the high) byte of its
// 16-bit half; it indexes within 128-bit lanes, where dword i starts at byte 4i.
template <bool Signed>
inline void byte_pairs16(__m512i t, __m512i &p01, __m512i &p23) {
    if constexpr (Signed) {
        p01 = _mm512_srai_epi16(_mm512_shuffle_epi8(t, _mm512_set4_epi32(int32_t(0x0D800C80), int32_t(0x09800880),
                                                                          int32_t(0x05800480), int32_t(0x01800080))),
                                8);
        p23 = _mm512_srai_epi16(_mm512_shuffle_epi8(t, _mm512_set4_epi32(int32_t(0x0F800E80), int32_t(0x0B800A80),
                                                                          int32_t(0x07800680), int32_t(0x03800280))),
                                8);
    } else {
        p01 = _mm512_shuffle_epi8(t, _mm512_set4_epi32(int32_t(0x800D800C), int32_t(0x80098008), int32_t(0x80058004),
                                                       int32_t(0x80018000)));
        p23 = _mm512_shuffle_epi8(t, _mm512_set4_epi32(int32_t(0x800F800E), int32_t(0x800B800A), int32_t(0x80078006),
                                                       int32_t(0x80038002)));
    }
}

// Bit `bit` of every byte of x moved to bit 4 (Q5_K's fifth bit of sub-block `bit`).
inline __m512i bit_to_4(__m512i x, int bit) {
    const __m512i m = _mm512_set1_epi8(0x10);
    if (bit < 4) return _mm512_and_si512(_mm512_slli_epi16(x, unsigned(4 - bit)), m);
    if (bit > 4) return _mm512_and_si512(_mm512_srli_epi16(x, unsigned(bit - 4)), m);
    return _mm512_and_si512(x, m);
}

// The activation side of the panels whose term per 32-element sub-block j pairs with T_j: D_a
// and the int16 pairs (T_2k, T_2k+1), T_j = bs[2j] + bs[2j + 1] (Q4_K's and Q5_K's mins, IQ4_XS's
// and IQ3_S's offsets).
struct TPairsAct {
    struct Act {
        int32_t T[4];  // int16 pairs (T_2k, T_2k+1)
        float D;       // D_a
    };
    static inline Act act(const uint8_t *a) {
        const ActK x = act_k(a);
        Act t;
        _mm_storeu_si128(reinterpret_cast<__m128i *>(t.T), x.T);
        t.D = x.D;
        return t;
    }
};

// Q4_K and Q5_K (fp16 d | fp16 dmin | scales[12] | [Q5_K: qh[32]] | qs[128] at kQs).
template <size_t kQs, bool kHighBit>
struct K4Panel : TPairsAct {
    struct Weights {
        __m512i P[8][8];  // [sub-block j][dword group g]: q of values 32j + 4g .. + 3
        __m512i sc[8];    // sc_j of the 16 rows (int32)
        __m512i mins[4];  // int16 pairs (m_2k, m_2k+1) of the 16 rows
        __m512 d, dmin;
    };
    static inline void decode(const uint8_t *const p[kPanelRows], Weights &w) {
        // qs piece k (16 bytes at kQs + 16k) holds values 32(2i) + 16h + t (lo nibbles) and
        // 32(2i + 1) + 16h + t (hi nibbles), i = k / 2, h = k % 2; Q5_K's qh[16h + t] holds their
        // fifth bits, bit j for sub-block j.
        const __m512i m4 = _mm512_set1_epi8(0x0F);
        __m512i qh[2][4];
        if constexpr (kHighBit)
            for (int h = 0; h < 2; ++h) transpose16x4(p, 16 + 16 * size_t(h), qh[h]);
        for (int k = 0; k < 8; ++k) {
            __m512i t[4];
            transpose16x4(p, kQs + 16 * size_t(k), t);
            const int j = 2 * (k / 2), h = k % 2;
            for (int g = 0; g < 4; ++g) {
                __m512i lo = _mm512_and_si512(t[g], m4), hi = _mm512_and_si512(_mm512_srli_epi16(t[g], 4), m4);
                if constexpr (kHighBit) {
                    lo = _mm512_or_si512(lo, bit_to_4(qh[h][g], j));
                    hi = _mm512_or_si512(hi, bit_to_4(qh[h][g], j + 1));
                }
                w.P[j][4 * h + g] = lo;
                w.P[j + 1][4 * h + g] = hi;
            }
        }
        // Scales and mins of the 16 rows unpacked (bytes 0-7 scales, 8-15 mins), then transposed.
        alignas(64) uint8_t sm[kPanelRows][16];
        const uint8_t *q[kPanelRows];
        for (int r = 0; r < kPanelRows; ++r) {
            _mm_store_si128(reinterpret_cast<__m128i *>(sm[r]), k4_scales_mins(p[r] + 4));
            q[r] = sm[r];
        }
        __m512i t[4];  // t[0]: scales 0-3 of each row, t[1]: 4-7, t[2]: mins 0-3, t[3]: mins 4-7
        transpose16x4(q, 0, t);
        for (int j = 0; j < 8; ++j)
            w.sc[j] = _mm512_and_si512(_mm512_srli_epi32(t[j / 4], 8 * (j % 4)), _mm512_set1_epi32(0xFF));
        // (m_2k, m_2k+1) as int16 pairs
        for (int h = 0; h < 2; ++h) byte_pairs16<false>(t[2 + h], w.mins[2 * h], w.mins[2 * h + 1]);
        w.d = fp16_rows(p, 0);
        w.dmin = fp16_rows(p, 2);
    }
    static inline void apply(__m512 *acc, const Weights &w, const Act *t, const uint8_t *xb, size_t xq_stride,
                             int32_t ms) {
        __m512i S[kMaxM];
        scaled_subblock_sums<8, 8>(S, w.P, w.sc, xb + q8_K_act::kQsOffset, xq_stride, ms);
        for (int32_t a = 0; a < ms; ++a) {
            __m512i M = _mm512_setzero_si512();
            for (int k = 0; k < 4; ++k) M = _mm512_dpwssd_epi32(M, w.mins[k], _mm512_set1_epi32(t[a].T[k]));
            acc[a] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(S[a]), _mm512_mul_ps(w.d, _mm512_set1_ps(t[a].D)), acc[a]);
            acc[a] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(M), _mm512_mul_ps(w.dmin, _mm512_set1_ps(-t[a].D)), acc[a]);
        }
    }
};

template <>
struct Panel<Q4_K> : K4Panel<16, false> {};
template <>
struct Panel<Q5_K> : K4Panel<48, true> {};

// Q6_K (ql[128] | qh[64] | int8 scales[16] | fp16 d), formats spec §5.3: per super-block
// S = sum_s sc_s * sum_{i in s} q_i a_i over 16 sub-blocks of 16, q in -32..31, then
// acc = fmaf((float)S, D_a * d, acc). On panels the quants are the unsigned u = q + 32 (0..63):
// 4 vpdpbusd per sub-block, times the rows' sc_s, and the offset 32 * sum_s sc_s bs[s] is 8
// vpdpwssd of the rows' scales as int16 pairs against the activation's bsums pairs, read straight
// from the Q8_K block, exact in int32 (the token path's Q6_KFields::ints does the same).
template <>
struct Panel<Q6_K> {
    struct Act {
        float D;  // D_a
    };
    static inline Act act(const uint8_t *a) { return {f32(a)}; }
    struct Weights {
        __m512i P[16][4];  // [sub-block s][dword group g]: u of values 16 s + 4 g .. + 3
        __m512i sc[16];    // sc_s of the 16 rows (int32)
        __m512i pairs[8];  // int16 pairs (sc_2k, sc_2k+1) of the 16 rows
        __m512 d;
    };
    static inline void decode(const uint8_t *const p[kPanelRows], Weights &w) {
        // Chunk C = 4 i + g (values 128 i + 32 g + l): the low 4 bits from nibble g / 2 of
        // ql[64 i + 32 (g % 2) + l], bits 4-5 from bits 2g, 2g + 1 of qh[32 i + l]; its halves
        // h (l = 16 h + t) are sub-blocks 2C + h.
        const __m512i m4 = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30);
        for (int i = 0; i < 2; ++i)
            for (int h = 0; h < 2; ++h) {
                __m512i qh[4];
                transpose16x4(p, 128 + 32 * size_t(i) + 16 * size_t(h), qh);
                for (int odd = 0; odd < 2; ++odd) {
                    __m512i ql[4];
                    transpose16x4(p, 64 * size_t(i) + 32 * size_t(odd) + 16 * size_t(h), ql);
                    for (int nib = 0; nib < 2; ++nib) {
                        const int g = odd + 2 * nib, sb = 2 * (4 * i + g) + h;
                        for (int k = 0; k < 4; ++k) {
                            const __m512i lo = nib ? _mm512_and_si512(_mm512_srli_epi16(ql[k], 4), m4)
                                                   : _mm512_and_si512(ql[k], m4);
                            __m512i hi;  // bits 2g, 2g + 1 to bits 4, 5 of each byte
                            if (g == 0) hi = _mm512_slli_epi16(qh[k], 4);
                            else if (g == 1) hi = _mm512_slli_epi16(qh[k], 2);
                            else if (g == 2) hi = qh[k];
                            else hi = _mm512_srli_epi16(qh[k], 2);
                            w.P[sb][k] = _mm512_or_si512(lo, _mm512_and_si512(hi, m30));
                        }
                    }
                }
            }
        __m512i t[4];  // t[k] byte b of row r: sc_{4k + b}
        transpose16x4(p, 192, t);
        for (int sb = 0; sb < 16; ++sb)
            w.sc[sb] = _mm512_srai_epi32(_mm512_slli_epi32(t[sb / 4], 24 - 8 * (sb % 4)), 24);
        // (sc_2k, sc_2k+1) as int16 pairs
        for (int k = 0; k < 4; ++k) byte_pairs16<true>(t[k], w.pairs[2 * k], w.pairs[2 * k + 1]);
        w.d = fp16_rows(p, 208);
    }
    static inline void apply(__m512 *acc, const Weights &w, const Act *t, const uint8_t *xb, size_t xq_stride,
                             int32_t ms) {
        __m512i S[kMaxM];
        scaled_subblock_sums<16, 4>(S, w.P, w.sc, xb + q8_K_act::kQsOffset, xq_stride, ms);
        for (int32_t a = 0; a < ms; ++a) {
            const uint8_t *bs = xb + size_t(a) * xq_stride + q8_K_act::kBsumsOffset;
            __m512i O = _mm512_setzero_si512();
            for (int k = 0; k < 8; ++k) O = _mm512_dpwssd_epi32(O, w.pairs[k], _mm512_set1_epi32(load_i32(bs + 4 * k)));
            const __m512i s = _mm512_sub_epi32(S[a], _mm512_slli_epi32(O, 5));
            acc[a] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(w.d, _mm512_set1_ps(t[a].D)), acc[a]);
        }
    }
};

// The rows path of a super-block format with panels: panels of 16 rows, then the 4-row tiles (and
// single rows) of simd/common.h.
template <class F>
struct SuperBlockPanelRows {
    static constexpr bool kEnabled = true;
    static inline void gemm(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const uint8_t *x,
                            size_t xq_stride, int32_t m, float *y, size_t ldy) {
        gemm_tail<F>(w, row_bytes, PanelRowsPath<F>::gemm(w, row_bytes, rows, n, x, xq_stride, m, y, ldy), rows, n, x,
                     xq_stride, m, y, ldy);
    }
};
template <class F>
struct RowsPath<F, std::enable_if_t<kOneOf<F, Q4_K, Q5_K, Q6_K>>> : SuperBlockPanelRows<F> {};

}  // namespace memra::simd::MEMRA_SIMD_NS
