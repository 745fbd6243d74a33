// The AVX-512 build's token-path steps over two consecutive blocks of a row (TokenBlockPair,
// called by simd/common.h token_row_pairs) for the super-block formats whose heads decode two
// blocks at once cheaper than twice one: both blocks' scale fields unpacked in one vector, then
// each block's chunk pairs (simd/wide512_q8_K_act.h TokenLanes) and one integer tree for both
// blocks' sums before the row's fmas in block order. Same integers, same fmas as every build.
// Included by simd/wide512_q8_K_act.h after the chunk pairs.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "simd/wide512_q8_K_act.h"

namespace memra::simd::MEMRA_SIMD_NS {

// A 256-bit constant repeated in both halves of a zmm, as one 64-byte constant: written as
// _mm512_broadcast_i64x4 of a ymm constant, GCC 12 kept the ymm and re-broadcast it in the loop
// (one vshufi64x2 per use).
template <class T, int N>
struct alignas(64) Twice256 {
    T v[2 * N];
    constexpr Twice256(const T (&half)[N]) : v{} {
        for (int i = 0; i < 2 * N; ++i) v[i] = half[i % N];
    }
    __m512i zmm() const { return _mm512_load_si512(v); }
};

// The 16 bytes at offset At of blocks p and p + F::kBytes, one per 128-bit lane: the field every
// step below unpacks for both blocks at once.
template <class F, int At>
inline __m256i both_blocks128(const uint8_t *p) {
    return _mm256_inserti128_si256(_mm256_castsi128_si256(load128(p + At)),
                                   load128(p + F::kBytes + At), 1);
}

// Q4_K's and Q5_K's step of token_row_pairs (blocks p and p + kBytes of one row): both blocks'
// 12-byte scale/min fields unpacked in one ymm (one 128-bit lane each), the chunk multipliers
// shuffled straight from those bytes, both blocks' M by one vpmaddwd, and S0, S1, M0, M1 by two
// vphaddd where two blocks' Heads and Ints took twice the shuffles and three. Same integers,
// same fmas. The vector shuffles (and shifts) share two pipes on Zen 5; Q4_K's v2 loop had v1's
// instruction count and ran 11-17% slower. In cache on the Zen 5 VM (memra-bench-micro
// gemv/avx512bf16/q4_K, best of 12 alternating runs, 2026-12-05): 26.3 -> 30.4 GB/s, v1 29.6.
template <class Fields>
struct K4BlockPair {
    static constexpr bool kEnabled = true;
    static inline void step(float &acc, const uint8_t *p, const ActK &x0, const ActK &x1) {
        const uint8_t *q = p + Fields::kBytes;
        const __m256i v = k4_scales_mins_lanes(both_blocks128<Fields, 4>(p));
        const __m512i vz = _mm512_castsi256_si512(v);
        const K4Bytes b0{_mm512_shuffle_i32x4(vz, vz, 0x00)},
            b1{_mm512_shuffle_i32x4(vz, vz, 0x55)};
        using Lanes = TokenLanes<Fields>;
        const __m256i s0 = Lanes::lanes(p, b0, x0), s1 = Lanes::lanes(q, b1, x1);
        // block k's mins (bytes 8-15 of lane k) as int16 against its activations' T: lane k =
        // its 4 M parts
        const __m256i mins = _mm256_shuffle_epi8(v, broadcast128(Q4_KFields::mins_u16()));
        const __m256i m =
            _mm256_madd_epi16(mins, _mm256_inserti128_si256(_mm256_castsi128_si256(x0.T), x1.T, 1));
        // lane 0 = [M0 parts 0, 1 | M1 parts 0, 1], lane 1 = parts 2, 3: the tree ends in
        // [S0 S1 M0 M1]
        const __m256i t =
            _mm256_hadd_epi32(_mm256_hadd_epi32(s0, s1), _mm256_permute4x64_epi64(m, 0xD8));
        const __m128 SM = _mm_cvtepi32_ps(
            _mm_add_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1)));
        struct {
            float d, dmin;
        } h0, h1;
        const __m128 dd0 = fp16x2(p), dd1 = fp16x2(q);
        h0 = {_mm_cvtss_f32(dd0), lane<1>(dd0)}, h1 = {_mm_cvtss_f32(dd1), lane<1>(dd1)};
        Fields::template fma_pair<0, 2, 1, 3>(acc, SM, h0, h1, x0, x1);
    }
};
template <>
struct TokenBlockPair<Q4_K> : K4BlockPair<Q4_KFields> {};
template <>
struct TokenBlockPair<Q5_K> : K4BlockPair<Q5_KFields> {};

// The block-pair step of a one-term format once both heads are decoded: each block's pair-decode
// lanes, then one tree for both S and the two fmas in block order (OneTerm::combine_pair).
template <class F, class Act>
inline void one_term_pair_step(float &acc, const uint8_t *p, const ZScales &h0, const ZScales &h1,
                               const Act &x0, const Act &x1) {
    using Lanes = TokenLanes<F>;
    const Ints i0{Lanes::lanes(p, h0, x0), _mm256_setzero_si256()};
    const Ints i1{Lanes::lanes(p + F::kBytes, h1, x1), _mm256_setzero_si256()};
    F::combine_pair(acc, h0, h1, i0, i1, x0, x1);
}

// IQ4_XS's step of token_row_pairs (blocks p and p + 136): both blocks' scale fields unpacked
// to int16 in one ymm (one 128-bit lane each) by two in-lane byte shuffles and two word shifts,
// where each block's head (IQ4_XSFields::scale_bytes) spread scales_h with scalar shifts and
// masks, then widened and broadcast. Same integers, same fmas.
template <>
struct TokenBlockPair<IQ4_XS> {
    static constexpr bool kEnabled = true;
    // Per 128-bit lane, from the block's first 16 bytes (d | scales_h | scales_l | ...): word sb =
    // (nibble sb of scales_l | bits 2 sb, 2 sb + 1 of scales_h << 4) - 32.
    static inline __m256i scales_lanes(__m256i v) {
        // word sb: byte 4 + sb / 2 (its nibble sb % 2 shifted down by 0 | 4)
        const __m256i l = _mm256_srlv_epi16(
            shuffle_in_lanes(v,
                             _mm_setr_epi8(4, -1, 4, -1, 5, -1, 5, -1, 6, -1, 6, -1, 7, -1, 7, -1)),
            _mm256_setr_epi16(0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4));
        // word sb: byte 2 + sb / 4 as its high byte, its field 2 (sb % 4) down to bits 4-5
        const __m256i h = _mm256_srlv_epi16(
            shuffle_in_lanes(v,
                             _mm_setr_epi8(-1, 2, -1, 2, -1, 2, -1, 2, -1, 3, -1, 3, -1, 3, -1, 3)),
            _mm256_setr_epi16(4, 6, 8, 10, 4, 6, 8, 10, 4, 6, 8, 10, 4, 6, 8, 10));
        const __m256i ls =
            or_masked(_mm256_and_si256(l, _mm256_set1_epi16(0x0F)), h, _mm256_set1_epi16(0x30));
        return _mm256_sub_epi16(ls, _mm256_set1_epi16(32));
    }
    static inline void step(float &acc, const uint8_t *p, const ActK &x0, const ActK &x1) {
        const uint8_t *q = p + IQ4_XSFields::kBytes;
        const __m512i v = _mm512_castsi256_si512(scales_lanes(both_blocks128<IQ4_XSFields, 0>(p)));
        one_term_pair_step<IQ4_XSFields>(
            acc, p, ZScales{_mm512_shuffle_i32x4(v, v, 0x00), fp16_lead(p)},
            ZScales{_mm512_shuffle_i32x4(v, v, 0x55), fp16_lead(q)}, x0, x1);
    }
};

// Q3_K's step of token_row_pairs (blocks p and p + 110): both blocks' 16 signed 6-bit scales
// unpacked to int16 [even | odd] in one zmm (a 256-bit half each) by two byte shuffles and two
// word shifts, where each block's head gathered the high bits with scalar shifts and vpinsrd.
template <>
struct TokenBlockPair<Q3_K> {
    static constexpr bool kEnabled = true;
    // From the 16 bytes ending the block (qs's last 2, the 12 scale bytes, d: no read past the
    // block) in both 128-bit lanes of each 256-bit half: word k of lane L is scale j = 2 k + L,
    // (low4_j | high2_j << 4) - 32, low4_j nibble j / 8 of scale byte j % 8, high2_j bits
    // 2 (j / 4), 2 (j / 4) + 1 of scale byte 8 + j % 4 (scale byte b at index 2 + b).
    static inline __m512i scales_lanes(__m512i v) {
        static constexpr Twice256<int8_t, 32> sel_low{
            {2, -1, 4, -1, 6, -1, 8, -1, 2, -1, 4, -1, 6, -1, 8, -1,  //
             3, -1, 5, -1, 7, -1, 9, -1, 3, -1, 5, -1, 7, -1, 9, -1}};
        static constexpr Twice256<int16_t, 16> shift_low{
            {0, 0, 0, 0, 4, 4, 4, 4, 0, 0, 0, 0, 4, 4, 4, 4}};
        static constexpr Twice256<int8_t, 32> sel_high{
            {-1, 10, -1, 12, -1, 10, -1, 12, -1, 10, -1, 12, -1, 10, -1, 12,  //
             -1, 11, -1, 13, -1, 11, -1, 13, -1, 11, -1, 13, -1, 11, -1, 13}};
        // high2_j to bits 4-5 of the word whose high byte holds it: right 4 + 2 (j / 4)
        static constexpr Twice256<int16_t, 16> shift_high{
            {4, 4, 6, 6, 8, 8, 10, 10, 4, 4, 6, 6, 8, 8, 10, 10}};
        const __m512i l = _mm512_srlv_epi16(_mm512_shuffle_epi8(v, sel_low.zmm()), shift_low.zmm());
        const __m512i h =
            _mm512_srlv_epi16(_mm512_shuffle_epi8(v, sel_high.zmm()), shift_high.zmm());
        const __m512i ls =
            or_masked(_mm512_and_si512(l, _mm512_set1_epi16(0x0F)), h, _mm512_set1_epi16(0x30));
        return _mm512_sub_epi16(ls, _mm512_set1_epi16(32));
    }
    template <class Act>
    static inline void step(float &acc, const uint8_t *p, const Act &x0, const Act &x1) {
        const uint8_t *q = p + Q3_KFields::kBytes;
        const __m512i v = scales_lanes(_mm512_mask_broadcast_i32x4(
            _mm512_broadcast_i32x4(load128(p + 94)), 0xFF00, load128(q + 94)));
        one_term_pair_step<Q3_KFields>(
            acc, p, ZScales{_mm512_shuffle_i64x2(v, v, 0x44), fp16(p + 108)},
            ZScales{_mm512_shuffle_i64x2(v, v, 0xEE), fp16(q + 108)}, x0, x1);
    }
};

// Q6_K's step of token_row_pairs (blocks p and p + 210): both blocks' int8 scales widened to
// 32 words of one zmm by one vpmovsxbw; each chunk pair's multipliers one vpermw from it; the
// offset -32 sum_s sc_s bs[s] of each block by one vpmaddwd of -32 sc against its bsums,
// added to its lanes. One vpmovsxbw, one sub and one shift for both blocks where each block's
// head took a shuffle and two vpmovsxbw and its Ints a shift and a sub. Same integers, same fmas.
template <>
struct TokenBlockPair<Q6_K> {
    static constexpr bool kEnabled = true;
    static inline void step(float &acc, const uint8_t *p, const ActK &x0, const ActK &x1) {
        const uint8_t *q = p + Q6_KFields::kBytes;
        const __m512i sc = _mm512_cvtepi8_epi16(both_blocks128<Q6_KFields, 192>(p));
        // -32 sc: |sc| <= 128, so |32 sc| <= 4096 and each vpmaddwd pair stays far inside int32
        const __m512i m32 = _mm512_slli_epi16(_mm512_sub_epi16(_mm512_setzero_si512(), sc), 5);
        using Lanes = TokenLanes<Q6_KFields>;
        const __m256i s0 = _mm256_add_epi32(Lanes::lanes(p, Q6Words<0>{sc}, x0),
                                            _mm256_madd_epi16(_mm512_castsi512_si256(m32), x0.bs));
        const __m256i s1 =
            _mm256_add_epi32(Lanes::lanes(q, Q6Words<1>{sc}, x1),
                             _mm256_madd_epi16(_mm512_extracti64x4_epi64(m32, 1), x1.bs));
        struct {
            float d;
        } h0{fp16(p + 208)}, h1{fp16(q + 208)};
        Q6_KFields::combine_pair(acc, h0, h1, Ints{s0, _mm256_setzero_si256()},
                                 Ints{s1, _mm256_setzero_si256()}, x0, x1);
    }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
