// The AVX-512 build's chunk pairs of the super-block formats paired with Q8_K activations,
// included by simd/formats_q8_K_act.h only where the ISA selection defines MEMRA_SIMD_WIDE512:
// formats with a 512-bit decode of chunks 2P and 2P + 1 (Q4_K, Q2_K, Q3_K, Q6_K, IQ4_XS) dot both
// in one vpmaddubsw + vpdpwssd against the 64 activations in their natural order on the token
// path, half the vector instructions of two chunks; the halves are folded into the same 8 exact
// int lanes, so the results are those of every other build.
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
// (a | (b & c)) bytewise in one vpternlogq: the decodes below merge a nibble or bit pair with
// the masked high bits this way.
inline __m512i or_masked(__m512i a, __m512i b, __m512i c) {
    return _mm512_ternarylogic_epi64(a, b, c, 0xF8);
}
inline __m256i or_masked(__m256i a, __m256i b, __m256i c) {
    return _mm256_ternarylogic_epi64(a, b, c, 0xF8);
}

// A block's per-block multiplier vector (8 scales in every 128-bit lane, or 16 as [even | odd]
// twice) already in a zmm, and its d: the head the block-pair steps
// (simd/wide512_token_block_pairs.h) decode for two blocks at once.
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
// The same from a block's head: a format's Head (its scales16) or a ZScales decoded for two
// blocks (simd/wide512_token_block_pairs.h).
template <int C, class Head>
inline __m512i pair_scale_of(const Head &h) {
    return pair_scale<C>(h.scales16);
}
template <int C>
inline __m512i pair_scale_of(const ZScales &h) {
    return pair_scale_z<C>(h.words);
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

// Q5_K's chunk pairs: Q4_K's (its qs 32 bytes further on) with bits 2P, 2P + 1 of qh as bit 4,
// one broadcast of qh and one variable shift per pair, where two 256-bit chunks took two more
// shifts, ands and ors, and twice the vpmaddubsw / vpdpwssd.
struct Q5_KPairs {
    template <int P, class Head>
    static inline UPair pair(const uint8_t *p, const Head &h) {
        constexpr int c = 2 * P;
        const UPair k = Q4_KPairs::pair<P>(p + 32, h);
        const __m512i qh = _mm512_broadcast_i64x4(load256(p + 16));
        // bit c | c + 1 to bit 4: left 4 - c | 3 - c for c <= 2, else right c - 4 | c - 3
        const __m512i hi =
            c <= 2 ? _mm512_sllv_epi64(qh, _mm512_setr_epi64(4 - c, 4 - c, 4 - c, 4 - c, 3 - c,
                                                             3 - c, 3 - c, 3 - c))
                   : _mm512_srlv_epi64(qh, _mm512_setr_epi64(c - 4, c - 4, c - 4, c - 4, c - 3,
                                                             c - 3, c - 3, c - 3));
        return {or_masked(k.q, hi, _mm512_set1_epi8(0x10)), k.sc};
    }
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

// Two Q6_K blocks' 32 int16 scales in natural order (block B's at words 16 B ..): the chunk
// pairs' multipliers by one vpermw each (TokenBlockPair<Q6_K>).
template <int B>
struct Q6Words {
    __m512i words;
};
// 128-bit lane L of chunks C, C + 1: scale 2 C + L (sub-blocks of 16)
template <int C, int B>
inline __m512i pair_scale_of(const Q6Words<B> &h) {
    constexpr short w = short(16 * B + 2 * C);
    return _mm512_permutexvar_epi16(
        _mm512_setr_epi64(w * 0x0001000100010001ll, w * 0x0001000100010001ll,
                          (w + 1) * 0x0001000100010001ll, (w + 1) * 0x0001000100010001ll,
                          (w + 2) * 0x0001000100010001ll, (w + 2) * 0x0001000100010001ll,
                          (w + 3) * 0x0001000100010001ll, (w + 3) * 0x0001000100010001ll),
        h.words);
}

// Q6_K's chunk pairs: one 512-bit ql load, one broadcast of qh and one variable shift per pair
// where two 256-bit chunks took two loads, four shifts, four ands and two ors, and half the
// vpmaddubsw / vpdpwssd.
struct Q6_KPairs {
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
    template <int P, class Head>
    static inline OPair<Q3_KFields::kOffset> pair(const uint8_t *p, const Head &h) {
        constexpr int g = 2 * (P % 2), c = 2 * P;
        const __m512i x = _mm512_broadcast_i64x4(load256(p + 32 + 32 * (P / 2)));
        const __m512i low = _mm512_and_si512(
            _mm512_srlv_epi64(x, _mm512_setr_epi64(2 * g, 2 * g, 2 * g, 2 * g, 2 * g + 2, 2 * g + 2,
                                                   2 * g + 2, 2 * g + 2)),
            _mm512_set1_epi8(0x03));
        const __m512i hm = _mm512_broadcast_i64x4(load256(p));
        // bit c (c + 1) to bit 2: left 2 | 1 for P = 0, else right c - 2 | c - 1
        const __m512i hi =
            c < 2 ? _mm512_sllv_epi64(hm, _mm512_setr_epi64(2, 2, 2, 2, 1, 1, 1, 1))
                  : _mm512_srlv_epi64(hm, _mm512_setr_epi64(c - 2, c - 2, c - 2, c - 2, c - 1,
                                                            c - 1, c - 1, c - 1));
        return {or_masked(low, hi, _mm512_set1_epi8(0x04)), pair_scale_of<c>(h)};
    }
};

template <>
struct TokenLanes<Q4_KFields> : PairDecodeLanes<Q4_KFields, Q4_KPairs> {};
template <>
struct TokenLanes<Q5_KFields> : PairDecodeLanes<Q5_KFields, Q5_KPairs> {};
template <>
struct TokenLanes<Q6_KFields> : PairDecodeLanes<Q6_KFields, Q6_KPairs> {};
template <>
struct TokenLanes<Q3_KFields> : PairDecodeLanes<Q3_KFields, Q3_KPairs> {};
template <>
struct TokenLanes<Q2_KFields> : PairDecodeLanes<Q2_KFields, Q2_KPairs> {};
template <>
struct TokenLanes<IQ4_XSFields> : PairDecodeLanes<IQ4_XSFields, IQ4_XSPairs> {};

}  // namespace memra::simd::MEMRA_SIMD_NS

#include "simd/wide512_token_block_pairs.h"  // the token path's block-pair steps (TokenBlockPair)
#include "simd/wide512_panels_q8_K.h"  // Q4_K's, Q5_K's and Q6_K's rows path on VNNI panels of 16 rows
#include "simd/wide512_panels_chunks.h"  // Q2_K's, Q3_K's, IQ4_XS's and IQ3_S's
#include "simd/wide512_token_by_panels.h"  // IQ3_S's token path on AMD
#include "simd/wide512_token_tuned.h"  // Q2_K's token path on Intel
