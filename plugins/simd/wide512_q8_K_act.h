// The AVX-512 build's chunk pairs of the super-block formats paired with Q8_K activations,
// included by simd/formats_q8_K_act.h only where the ISA selection defines MEMRA_SIMD_WIDE512:
// formats with a 512-bit decode of chunks 2P and 2P + 1 (Q4_K, Q2_K, IQ4_XS) dot both in one
// vpmaddubsw + vpdpwssd against the 64 activations in their natural order on the token path,
// half the vector instructions of two chunks; the halves are folded into the same 8 exact int
// lanes, so the results are those of every other build.
#pragma once

#include <immintrin.h>

#include <utility>

#include "simd/formats_q8_K_act.h"

namespace memra::simd::MEMRA_SIMD_NS {

// Two decoded chunks, 2P in the low and 2P + 1 in the high 256 bits, with their multipliers.
struct UPair {
    __m512i q, sc;
};
// Signed quants: magnitudes, and the lanes whose activation takes a minus sign (the sign trick
// without vpsignb, as wide512_isa.h does it; where q == 0 the sign does not matter).
struct SPair {
    __m512i mag;
    __mmask64 neg;
    __m512i sc;
};
// Offset quants u = q + K (Q3_K): the offset comes off the int16 pair sums by the activation
// block's prepared koff of the same two chunks (OChunk, simd/superblock_lanes.h).
template <int K>
struct OPair {
    __m512i u, sc;
};
// Chunk pair `pair` against its 64 activations a (and, for an offset pair, x's koff).
template <class Act>
inline __m512i pair_dot(__m512i acc, const UPair &k, __m512i a, const Act &, int) {
    return _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(k.q, a), k.sc);
}
template <class Act>
inline __m512i pair_dot(__m512i acc, const SPair &k, __m512i a, const Act &, int) {
    const __m512i signed_a = _mm512_mask_sub_epi8(a, k.neg, _mm512_setzero_si512(), a);
    return _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(k.mag, signed_a), k.sc);
}
template <int K, class Act>
inline __m512i pair_dot(__m512i acc, const OPair<K> &k, __m512i a, const Act &x, int pair) {
    const __m512i koff = _mm512_loadu_si512(&x.koff[2 * pair]);  // koff[2P] | koff[2P + 1]
    return _mm512_dpwssd_epi32(acc, _mm512_sub_epi16(_mm512_maddubs_epi16(k.u, a), koff), k.sc);
}
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

// A block's per-block multiplier vector (8 scales in every 128-bit lane, or 16 as [even | odd]
// twice) already in a zmm, and its d: the head the block-pair steps below decode for two blocks
// at once.
struct ZScales {
    __m512i words;
    float d;
};
// chunk_scale of chunks C and C + 1 in the low and high halves: the same in-lane shuffle of the
// per-block vector, widened.
// From a zmm holding the per-block vector's 128-bit half in every lane:
template <int C>
inline __m512i pair_scale_z(__m512i v) {
    const __m512i sel = _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_set1_epi16(int16_t(((2 * C + 1) << 8) | (2 * C)))),
        _mm256_set1_epi16(int16_t(((2 * C + 3) << 8) | (2 * C + 2))), 1);
    return _mm512_shuffle_epi8(v, sel);
}
template <int C>
inline __m512i pair_scale(__m256i scales16) {
    return pair_scale_z<C>(_mm512_broadcast_i64x4(scales16));
}

// The token-path lanes of a super-block whose fields decode chunk pairs (Pairs::pair<P>, a UPair
// or SPair): even and odd pairs in two int chains, folded.
template <class F, class Pairs>
struct PairDecodeLanes {
    static constexpr bool kEnabled = true;
    template <class Act, class Head, int... P>
    static inline __m256i dot_pairs(const uint8_t *p, const Head &h, const Act &x, std::integer_sequence<int, P...>) {
        __m512i even = _mm512_setzero_si512(), odd = _mm512_setzero_si512();
        auto step = [&](__m512i acc, const auto &k, int pair) {
            return pair_dot(acc, k, _mm512_loadu_si512(q8k::qs(x.a) + 64 * pair), x, pair);
        };
        ((even = step(even, Pairs::template pair<2 * P>(p, h), 2 * P),
          odd = step(odd, Pairs::template pair<2 * P + 1>(p, h), 2 * P + 1)),
         ...);
        return WideLanes<true>::fold(_mm512_add_epi32(even, odd));
    }
    template <class Act, class Head = typename F::Head>
    static inline __m256i lanes(const uint8_t *p, const Head &h, const Act &x) {
        return dot_pairs(p, h, x, std::make_integer_sequence<int, 2>());
    }
};

// One Q4_K / Q5_K block's unpacked scale and min bytes (k4_scales_mins: scales 0-7, mins 8-15)
// in every 128-bit lane, as TokenBlockPair<Q4_K> decodes them for two blocks at once.
struct K4Bytes {
    __m512i bytes;
};
// chunk_scale of chunks C and C + 1 straight from K4Bytes: byte C (C + 1) zero-extended to int16
// by the same in-lane shuffle (index 0x80 gives 0; the scales are 0..63), no vpmovsxbw.
template <int C>
inline __m512i pair_scale(const K4Bytes &h) {
    const __m512i sel = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16(int16_t(0x8000 | C))),
                                           _mm256_set1_epi16(int16_t(0x8000 | (C + 1))), 1);
    return _mm512_shuffle_epi8(h.bytes, sel);
}

struct Q4_KPairs {
    // chunks 2P | 2P + 1: the low | high nibbles of qs[32 P ..], one broadcast load
    template <int P, class Head>
    static inline UPair pair(const uint8_t *p, const Head &h) {
        const __m512i x = _mm512_broadcast_i64x4(load256(p + 16 + 32 * P));
        const __m512i shift = _mm512_setr_epi64(0, 0, 0, 0, 4, 4, 4, 4);
        return {_mm512_and_si512(_mm512_srlv_epi64(x, shift), _mm512_set1_epi8(0x0F)), pair_scale_of<2 * P>(h)};
    }
    template <int C>
    static inline __m512i pair_scale_of(const Q4_KFields::Head &h) { return pair_scale<C>(K4Bytes{_mm512_broadcast_i64x4(h.bytes)}); }
    template <int C>
    static inline __m512i pair_scale_of(const K4Bytes &h) { return pair_scale<C>(h); }
};

// Q2_K's chunk pairs: half the vpshufb / vpmaddubsw / vpdpwssd of its 8 chunks on 256 bits; in
// cache +8% on the Zen 5 VM (memra-bench-micro gemv/avx512bf16/q2_K, best of 12 alternating runs,
// 17.2 -> 18.6 GB/s, v1 17.8; 2026-12-05).
struct Q2_KPairs {
    // chunks 2P | 2P + 1 (= 4 i + g, g = 2 (P % 2) and g + 1): bits 2g, 2g + 1 of qs[32 i ..] in the
    // low half, bits 2g + 2, 2g + 3 in the high half, one broadcast load
    template <int P>
    static inline UPair pair(const uint8_t *p, const Q2_KFields::Head &h) {
        constexpr int g = 2 * (P % 2);
        const __m512i x = _mm512_broadcast_i64x4(load256(p + 16 + 32 * (P / 2)));
        const __m512i shift = _mm512_setr_epi64(2 * g, 2 * g, 2 * g, 2 * g, 2 * g + 2, 2 * g + 2, 2 * g + 2, 2 * g + 2);
        return {_mm512_and_si512(_mm512_srlv_epi64(x, shift), _mm512_set1_epi8(0x03)), pair_scale<2 * P>(h.scales16)};
    }
};

// IQ4_XS's values are negative exactly at indices 0-7: the lanes to negate come from the index
// (bit 3 clear) and the magnitudes from a table of |value|, so no vpabsb and the mask does not
// wait for the lookup. With the two broadcast loads below (one vshufi64x2 less per chunk pair),
// measured together in cache on the Zen 5 VM (memra-bench-micro gemv/avx512bf16/iq4_xs, best of
// 12 alternating runs, 2026-12-05): 19.1 -> 21.3 GB/s, v1 20.5.
constexpr bool iq4nl_negative_below_8() {
    for (int i = 0; i < 16; ++i)
        if ((kValuesIq4nl[i] < 0) != (i < 8)) return false;
    return true;
}
static_assert(iq4nl_negative_below_8(), "IQ4_XSPairs takes the sign from the index");

struct IQ4_XSPairs {
    template <int C>
    static inline __m512i pair_scale_of(const IQ4_XSFields::Head &h) { return pair_scale<C>(h.scales16); }
    template <int C>
    static inline __m512i pair_scale_of(const ZScales &h) { return pair_scale_z<C>(h.words); }
    // chunks 2P | 2P + 1 from the 32 bytes at 8 + 32 P: 128-bit lanes = lo | hi nibbles of the
    // first 16 bytes, then of the second 16 (two 128-bit broadcast loads, the second merged into
    // lanes 2-3: no shuffle), through the value table
    template <int P, class Head>
    static inline SPair pair(const uint8_t *p, const Head &h) {
        const __m512i lanes = _mm512_mask_broadcast_i32x4(_mm512_broadcast_i32x4(load128(p + 8 + 32 * P)), 0xFF00,
                                                          load128(p + 8 + 32 * P + 16));  // 16 bytes: 0, 0, 1, 1
        const __m512i shift = _mm512_setr_epi64(0, 0, 4, 4, 0, 0, 4, 4);
        const __m512i idx = _mm512_and_si512(_mm512_srlv_epi64(lanes, shift), _mm512_set1_epi8(0x0F));
        const __m512i mag = _mm512_shuffle_epi8(_mm512_abs_epi8(_mm512_broadcast_i32x4(load128(kValuesIq4nl))), idx);
        return {mag, _mm512_testn_epi8_mask(idx, _mm512_set1_epi8(8)), pair_scale_of<2 * P>(h)};
    }
};

// (a | (b & c)) bytewise in one vpternlogq: the decodes below merge a nibble or bit pair with
// the masked high bits this way.
inline __m512i or_masked(__m512i a, __m512i b, __m512i c) { return _mm512_ternarylogic_epi64(a, b, c, 0xF8); }
inline __m256i or_masked(__m256i a, __m256i b, __m256i c) { return _mm256_ternarylogic_epi64(a, b, c, 0xF8); }

// Q6_K's chunk pairs: one 512-bit ql load, one broadcast of qh and one variable shift per pair
// where two 256-bit chunks took two loads, four shifts, four ands and two ors, and half the
// vpmaddubsw / vpdpwssd.
// Two Q6_K blocks' 32 int16 scales in natural order (block B's at words 16 B ..): the chunk
// pairs' multipliers by one vpermw each (TokenBlockPair<Q6_K>).
template <int B>
struct Q6Words {
    __m512i words;
};

struct Q6_KPairs {
    template <int C>
    static inline __m512i pair_scale_of(const Q6_KFields::Head &h) { return pair_scale<C>(h.scales16); }
    // 128-bit lane L of chunks C, C + 1: scale 2 C + L (sub-blocks of 16)
    template <int C, int B>
    static inline __m512i pair_scale_of(const Q6Words<B> &h) {
        constexpr short w = short(16 * B + 2 * C);
        return _mm512_permutexvar_epi16(_mm512_setr_epi64(w * 0x0001000100010001ll, w * 0x0001000100010001ll,
                                                          (w + 1) * 0x0001000100010001ll,
                                                          (w + 1) * 0x0001000100010001ll,
                                                          (w + 2) * 0x0001000100010001ll,
                                                          (w + 2) * 0x0001000100010001ll,
                                                          (w + 3) * 0x0001000100010001ll,
                                                          (w + 3) * 0x0001000100010001ll),
                                        h.words);
    }
    // chunks 2P | 2P + 1 (= 4 i + g, g = 2 (P % 2) and g + 1): nibble P % 2 of ql[64 i ..], the
    // 64 bytes of both chunks in order | bits 2g, 2g + 1 (low half) and 2g + 2, 2g + 3 (high
    // half) of qh[32 i ..] as bits 4, 5
    template <int P, class Head>
    static inline UPair pair(const uint8_t *p, const Head &h) {
        constexpr int i = P / 2, n = P % 2;
        const __m512i ql = _mm512_loadu_si512(p + 64 * i), m4 = _mm512_set1_epi8(0x0F);
        const __m512i low = _mm512_and_si512(n ? _mm512_srli_epi16(ql, 4) : ql, m4);
        const __m512i qh = _mm512_broadcast_i64x4(load256(p + 128 + 32 * i));
        // n = 0: bits 0-1 | 2-3 up to 4-5 (left 4 | 2); n = 1: bits 4-5 | 6-7 (left 0 | right 2)
        const __m512i hi = n ? _mm512_srlv_epi64(qh, _mm512_setr_epi64(0, 0, 0, 0, 2, 2, 2, 2))
                             : _mm512_sllv_epi64(qh, _mm512_setr_epi64(4, 4, 4, 4, 2, 2, 2, 2));
        return {or_masked(low, hi, _mm512_set1_epi8(0x30)), pair_scale_of<2 * P>(h)};
    }
};

// Q3_K's chunk pairs: u = q + 4 as Q2_K's bit pairs with hmask's bit c as bit 2, one variable
// shift of each broadcast field per pair; the offset off the pair sums (OPair).
struct Q3_KPairs {
    // chunks 2P | 2P + 1 (= 4 i + g, g = 2 (P % 2) and g + 1): bits 2g, 2g + 1 | 2g + 2, 2g + 3
    // of qs[32 i ..], bit 2P | 2P + 1 of hmask[0 ..] moved to bit 2
    template <int C>
    static inline __m512i pair_scale_of(const Q3_KFields::Head &h) { return pair_scale<C>(h.scales16); }
    template <int C>
    static inline __m512i pair_scale_of(const ZScales &h) { return pair_scale_z<C>(h.words); }
    template <int P, class Head>
    static inline OPair<Q3_KFields::kOffset> pair(const uint8_t *p, const Head &h) {
        constexpr int g = 2 * (P % 2), c = 2 * P;
        const __m512i x = _mm512_broadcast_i64x4(load256(p + 32 + 32 * (P / 2)));
        const __m512i low = _mm512_and_si512(
            _mm512_srlv_epi64(x, _mm512_setr_epi64(2 * g, 2 * g, 2 * g, 2 * g, 2 * g + 2, 2 * g + 2, 2 * g + 2, 2 * g + 2)),
            _mm512_set1_epi8(0x03));
        const __m512i hm = _mm512_broadcast_i64x4(load256(p));
        // bit c (c + 1) to bit 2: left 2 | 1 for P = 0, else right c - 2 | c - 1
        const __m512i hi = c < 2 ? _mm512_sllv_epi64(hm, _mm512_setr_epi64(2, 2, 2, 2, 1, 1, 1, 1))
                                 : _mm512_srlv_epi64(hm, _mm512_setr_epi64(c - 2, c - 2, c - 2, c - 2, c - 1, c - 1,
                                                                           c - 1, c - 1));
        return {or_masked(low, hi, _mm512_set1_epi8(0x04)), pair_scale_of<c>(h)};
    }
};

template <>
struct TokenLanes<Q4_KFields> : PairDecodeLanes<Q4_KFields, Q4_KPairs> {};
template <>
struct TokenLanes<Q6_KFields> : PairDecodeLanes<Q6_KFields, Q6_KPairs> {};
template <>
struct TokenLanes<Q3_KFields> : PairDecodeLanes<Q3_KFields, Q3_KPairs> {};
template <>
struct TokenLanes<Q2_KFields> : PairDecodeLanes<Q2_KFields, Q2_KPairs> {};
template <>
struct TokenLanes<IQ4_XSFields> : PairDecodeLanes<IQ4_XSFields, IQ4_XSPairs> {};

// Q4_K's step of token_row_pairs (blocks p and p + 144 of one row): both blocks' 12-byte
// scale/min fields unpacked in one ymm (one 128-bit lane each), the chunk multipliers shuffled
// straight from those bytes, both blocks' M by one vpmaddwd, and S0, S1, M0, M1 by two vphaddd
// where two blocks' Heads and Ints took twice the shuffles and three. Same integers, same fmas.
// The vector shuffles (and shifts) share two pipes on Zen 5; Q4_K's v2 loop had v1's instruction
// count and ran 11-17% slower. In cache on the Zen 5 VM (memra-bench-micro gemv/avx512bf16/q4_K,
// best of 12 alternating runs, 2026-12-05): 26.3 -> 30.4 GB/s, v1 29.6.
template <>
struct TokenBlockPair<Q4_K> {
    static constexpr bool kEnabled = true;
    static inline void step(float &acc, const uint8_t *p, const ActK &x0, const ActK &x1) {
        const uint8_t *q = p + Q4_KFields::kBytes;
        const __m256i v = k4_scales_mins_lanes(_mm256_inserti128_si256(_mm256_castsi128_si256(load128(p + 4)), load128(q + 4), 1));
        const __m512i vz = _mm512_castsi256_si512(v);
        const K4Bytes b0{_mm512_shuffle_i32x4(vz, vz, 0x00)}, b1{_mm512_shuffle_i32x4(vz, vz, 0x55)};
        using Lanes = TokenLanes<Q4_KFields>;
        const __m256i s0 = Lanes::lanes(p, b0, x0), s1 = Lanes::lanes(q, b1, x1);
        // block k's mins (bytes 8-15 of lane k) as int16 against its activations' T: lane k = its 4 M parts
        const __m256i mins = _mm256_shuffle_epi8(v, broadcast128(Q4_KFields::mins_u16()));
        const __m256i m = _mm256_madd_epi16(mins, _mm256_inserti128_si256(_mm256_castsi128_si256(x0.T), x1.T, 1));
        // lane 0 = [M0 parts 0, 1 | M1 parts 0, 1], lane 1 = parts 2, 3: the tree ends in [S0 S1 M0 M1]
        const __m256i t = _mm256_hadd_epi32(_mm256_hadd_epi32(s0, s1), _mm256_permute4x64_epi64(m, 0xD8));
        const __m128 SM = _mm_cvtepi32_ps(_mm_add_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1)));
        struct {
            float d, dmin;
        } h0, h1;
        const __m128 dd0 = fp16x2(p), dd1 = fp16x2(q);
        h0 = {_mm_cvtss_f32(dd0), lane<1>(dd0)}, h1 = {_mm_cvtss_f32(dd1), lane<1>(dd1)};
        Q4_KFields::fma_pair<0, 2, 1, 3>(acc, SM, h0, h1, x0, x1);
    }
};

// The block-pair step of a one-term format once both heads are decoded: each block's pair-decode
// lanes, then one tree for both S and the two fmas in block order (OneTerm::combine_pair).
template <class F, class Act>
inline void one_term_pair_step(float &acc, const uint8_t *p, const ZScales &h0, const ZScales &h1, const Act &x0,
                               const Act &x1) {
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
            shuffle_in_lanes(v, _mm_setr_epi8(4, -1, 4, -1, 5, -1, 5, -1, 6, -1, 6, -1, 7, -1, 7, -1)),
            _mm256_setr_epi16(0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4));
        // word sb: byte 2 + sb / 4 as its high byte, its field 2 (sb % 4) down to bits 4-5
        const __m256i h = _mm256_srlv_epi16(
            shuffle_in_lanes(v, _mm_setr_epi8(-1, 2, -1, 2, -1, 2, -1, 2, -1, 3, -1, 3, -1, 3, -1, 3)),
            _mm256_setr_epi16(4, 6, 8, 10, 4, 6, 8, 10, 4, 6, 8, 10, 4, 6, 8, 10));
        const __m256i ls = or_masked(_mm256_and_si256(l, _mm256_set1_epi16(0x0F)), h, _mm256_set1_epi16(0x30));
        return _mm256_sub_epi16(ls, _mm256_set1_epi16(32));
    }
    static inline void step(float &acc, const uint8_t *p, const ActK &x0, const ActK &x1) {
        const uint8_t *q = p + IQ4_XSFields::kBytes;
        const __m512i v = _mm512_castsi256_si512(
            scales_lanes(_mm256_inserti128_si256(_mm256_castsi128_si256(load128(p)), load128(q), 1)));
        one_term_pair_step<IQ4_XSFields>(acc, p, ZScales{_mm512_shuffle_i32x4(v, v, 0x00), fp16_lead(p)},
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
        static constexpr Twice256<int8_t, 32> sel_low{{2, -1, 4, -1, 6, -1, 8, -1, 2, -1, 4, -1, 6, -1, 8, -1,  //
                                                        3, -1, 5, -1, 7, -1, 9, -1, 3, -1, 5, -1, 7, -1, 9, -1}};
        static constexpr Twice256<int16_t, 16> shift_low{{0, 0, 0, 0, 4, 4, 4, 4, 0, 0, 0, 0, 4, 4, 4, 4}};
        static constexpr Twice256<int8_t, 32> sel_high{
            {-1, 10, -1, 12, -1, 10, -1, 12, -1, 10, -1, 12, -1, 10, -1, 12,  //
             -1, 11, -1, 13, -1, 11, -1, 13, -1, 11, -1, 13, -1, 11, -1, 13}};
        // high2_j to bits 4-5 of the word whose high byte holds it: right 4 + 2 (j / 4)
        static constexpr Twice256<int16_t, 16> shift_high{{4, 4, 6, 6, 8, 8, 10, 10, 4, 4, 6, 6, 8, 8, 10, 10}};
        const __m512i l = _mm512_srlv_epi16(_mm512_shuffle_epi8(v, sel_low.zmm()), shift_low.zmm());
        const __m512i h = _mm512_srlv_epi16(_mm512_shuffle_epi8(v, sel_high.zmm()), shift_high.zmm());
        const __m512i ls = or_masked(_mm512_and_si512(l, _mm512_set1_epi16(0x0F)), h, _mm512_set1_epi16(0x30));
        return _mm512_sub_epi16(ls, _mm512_set1_epi16(32));
    }
    template <class Act>
    static inline void step(float &acc, const uint8_t *p, const Act &x0, const Act &x1) {
        const uint8_t *q = p + Q3_KFields::kBytes;
        const __m512i v = scales_lanes(
            _mm512_mask_broadcast_i32x4(_mm512_broadcast_i32x4(load128(p + 94)), 0xFF00, load128(q + 94)));
        one_term_pair_step<Q3_KFields>(acc, p, ZScales{_mm512_shuffle_i64x2(v, v, 0x44), fp16(p + 108)},
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
        const __m512i sc =
            _mm512_cvtepi8_epi16(_mm256_inserti128_si256(_mm256_castsi128_si256(load128(p + 192)), load128(q + 192), 1));
        // -32 sc: |sc| <= 128, so |32 sc| <= 4096 and each vpmaddwd pair stays far inside int32
        const __m512i m32 = _mm512_slli_epi16(_mm512_sub_epi16(_mm512_setzero_si512(), sc), 5);
        using Lanes = TokenLanes<Q6_KFields>;
        const __m256i s0 = _mm256_add_epi32(Lanes::lanes(p, Q6Words<0>{sc}, x0),
                                            _mm256_madd_epi16(_mm512_castsi512_si256(m32), x0.bs));
        const __m256i s1 = _mm256_add_epi32(Lanes::lanes(q, Q6Words<1>{sc}, x1),
                                            _mm256_madd_epi16(_mm512_extracti64x4_epi64(m32, 1), x1.bs));
        struct {
            float d;
        } h0{fp16(p + 208)}, h1{fp16(q + 208)};
        Q6_KFields::combine_pair(acc, h0, h1, Ints{s0, _mm256_setzero_si256()}, Ints{s1, _mm256_setzero_si256()}, x0,
                                 x1);
    }
};

}  // namespace memra::simd::MEMRA_SIMD_NS

#include "simd/wide512_panels_q8_K.h"  // Q4_K's, Q5_K's and Q6_K's rows path on VNNI panels of 16 rows
#include "simd/wide512_panels_chunks.h"  // Q2_K's, Q3_K's, IQ4_XS's and IQ3_S's
#include "simd/wide512_token_by_panels.h"  // IQ3_S's token path on AMD
