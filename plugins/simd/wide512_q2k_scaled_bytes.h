// Q2_K's token path with the sub-block scales inside the weight bytes (the Intel tuning's form,
// simd/wide512_token_tuned.h): w = q sc (0..45, one unsigned byte) looked up by one in-lane
// vpshufb per chunk (ymm) or chunk pair (zmm) from a per-block table, dotted by one vpdpbusd,
// where the chunk pairs (simd/wide512_q8_K_act.h Q2_KPairs) take vpsrlvq + vpmaddubsw +
// vpdpwssd, three port-0 uops on Sapphire Rapids, per pair. The int32 lanes differ from the
// pairs' but sum to the same exact S (every product and sum is an exact small integer), so the
// bits are those of every build.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "simd/wide512_q8_K_act.h"

namespace memra::simd::MEMRA_SIMD_NS {

// The activations of Q2_K's scaled-byte form in the order its pairs read them: pair g (0..3) =
// chunks g | 4 + g, the two chunks whose quants are field g of qs[0..31] | qs[32..63], so each
// pair's quants are one shift (or none) of the block's 64 qs bytes. Prepared once per call.
struct ActKPairsG : ActK {
    alignas(64) int8_t qs[256];
};
inline ActKPairsG act_k_pairs_g(const uint8_t *a) {
    ActKPairsG x;
    static_cast<ActK &>(x) = act_k(a);
    for (int g = 0; g < 4; ++g) {
        _mm256_store_si256(reinterpret_cast<__m256i *>(x.qs + 64 * g), load256(q8k::qs(a) + 32 * g));
        _mm256_store_si256(reinterpret_cast<__m256i *>(x.qs + 64 * g + 32), load256(q8k::qs(a) + 128 + 32 * g));
    }
    return x;
}

// The few operations the form needs on a zmm (two chunks a step: Intel's 512-bit form) or a ymm
// (one chunk a step, every vector op free of port 1's 512-bit shutdown).
template <class V>
struct ScaledBytesOps;
template <>
struct ScaledBytesOps<__m512i> {
    using Mask = __mmask64;
    static __m512i load(const void *p) { return _mm512_loadu_si512(p); }
    static __m512i load_scales(const uint8_t *p) { return _mm512_broadcast_i32x4(load128(p)); }
    static __m512i set1(int8_t v) { return _mm512_set1_epi8(v); }
    static __m512i zero() { return _mm512_setzero_si512(); }
    static __m512i and_(__m512i a, __m512i b) { return _mm512_and_si512(a, b); }
    static __m512i add8(__m512i a, __m512i b) { return _mm512_add_epi8(a, b); }
    static __m512i maskz_mov8(Mask k, __m512i a) { return _mm512_maskz_mov_epi8(k, a); }
    static __m512i mask_add8(__m512i s, Mask k, __m512i a, __m512i b) { return _mm512_mask_add_epi8(s, k, a, b); }
    static __m512i shuffle8(__m512i t, __m512i i) { return _mm512_shuffle_epi8(t, i); }
    static __m512i or_masked_(__m512i a, __m512i m, __m512i b) { return _mm512_ternarylogic_epi64(a, m, b, 0xEA); }
    static __m512i srli16(__m512i a, int n) { return _mm512_srli_epi16(a, unsigned(n)); }
    static __m512i dpbusd(__m512i acc, __m512i u, __m512i s) { return _mm512_dpbusd_epi32(acc, u, s); }
    static __m256i lanes(__m512i v) { return WideLanes<true>::fold(v); }
    static __m512i add32(__m512i a, __m512i b) { return _mm512_add_epi32(a, b); }
};
template <>
struct ScaledBytesOps<__m256i> {
    using Mask = __mmask32;
    static __m256i load(const void *p) { return load256(static_cast<const uint8_t *>(p)); }
    static __m256i load_scales(const uint8_t *p) { return broadcast128(load128(p)); }
    static __m256i set1(int8_t v) { return _mm256_set1_epi8(v); }
    static __m256i zero() { return _mm256_setzero_si256(); }
    static __m256i and_(__m256i a, __m256i b) { return _mm256_and_si256(a, b); }
    static __m256i add8(__m256i a, __m256i b) { return _mm256_add_epi8(a, b); }
    static __m256i maskz_mov8(Mask k, __m256i a) { return _mm256_maskz_mov_epi8(k, a); }
    static __m256i mask_add8(__m256i s, Mask k, __m256i a, __m256i b) { return _mm256_mask_add_epi8(s, k, a, b); }
    static __m256i shuffle8(__m256i t, __m256i i) { return _mm256_shuffle_epi8(t, i); }
    static __m256i or_masked_(__m256i a, __m256i m, __m256i b) { return _mm256_ternarylogic_epi64(a, m, b, 0xEA); }
    static __m256i srli16(__m256i a, int n) { return _mm256_srli_epi16(a, n); }
    static __m256i dpbusd(__m256i acc, __m256i u, __m256i s) { return _mm256_dpbusd_epi32(acc, u, s); }
    static __m256i lanes(__m256i v) { return v; }
    static __m256i add32(__m256i a, __m256i b) { return _mm256_add_epi32(a, b); }
};

// Per block: W (byte 16 L + 4 g + f = f x scale of the sub-block lane L of pair g holds) and its
// in-lane transpose W' (byte 16 L + 4 f + g): each 16-byte lane one vpshufb table for all four
// pairs. Pair g's lanes hold field g of qs[0..31] (sub-blocks 2g, 2g + 1) | of qs[32..63]
// (8 + 2g, 9 + 2g); a field at bits 0-1 indexes W by 4 g + f, one at bits 2-3 W' by 4 f + g,
// each index one vpternlogq (field masked in place, g merged). vpshufb needs no VBMI (the
// AVX-512 builds' ISA has none). On ymm, half h of each: chunk 4 h + g, W's lanes 2 h, 2 h + 1.
template <class V>
struct Q2_KScaledBytes {
    using O = ScaledBytesOps<V>;
    static constexpr int kHalves = int(64 / sizeof(V));
    struct alignas(64) Bytes64 {
        int8_t v[64];
    };
    static constexpr Bytes64 w_index() {  // lane L, byte 4 g + f: scale byte 2 g + (L & 1) + 8 (L >> 1)
        Bytes64 b{};
        for (int j = 0; j < 64; ++j) {
            const int L = j / 16, g = (j % 16) / 4;
            b.v[j] = int8_t(2 * g + (L & 1) + 8 * (L >> 1));
        }
        return b;
    }
    static constexpr Bytes64 transpose_index() {  // byte 4 f + g of each lane from byte 4 g + f
        Bytes64 b{};
        for (int j = 0; j < 64; ++j) b.v[j] = int8_t(4 * (j % 4) + (j % 16) / 4);
        return b;
    }
    static inline V table_w(const uint8_t *p, int h) {
        static constexpr Bytes64 idx = w_index();
        const V s = O::and_(O::shuffle8(O::load_scales(p), O::load(idx.v + sizeof(V) * h)), O::set1(0x0F));
        // f x s for f = byte % 4: s where f is odd, plus 2 s where f >= 2
        const V w = O::maskz_mov8(typename O::Mask(0xAAAAAAAAAAAAAAAAull), s);
        return O::mask_add8(w, typename O::Mask(0xCCCCCCCCCCCCCCCCull), w, O::add8(s, s));
    }
    // Pair g's weight bytes: field (3 << At) of q masked in place, the table's other index bits
    // (g at bits 2-3 for At = 0, at bits 0-1 for At = 2) merged in by one vpternlogq.
    template <int G, int At>
    static inline V bytes(V q, V table) {
        constexpr int g_bits = At == 0 ? 4 * G : G;
        return O::shuffle8(table, O::or_masked_(q, O::set1(int8_t(3 << At)), O::set1(int8_t(g_bits))));
    }
    static inline __m256i lanes(const uint8_t *p, const ActKPairsG &x) {
        static constexpr Bytes64 tr = transpose_index();
        V even = O::zero(), odd = O::zero();
        for (int h = 0; h < kHalves; ++h) {
            const V w = table_w(p, h), wt = O::shuffle8(w, O::load(tr.v));
            const V q = O::load(p + 16 + sizeof(V) * h), q4 = O::srli16(q, 4);
            auto a = [&](int g) { return O::load(x.qs + 64 * g + sizeof(V) * h); };
            even = O::dpbusd(O::dpbusd(even, bytes<0, 0>(q, w), a(0)), bytes<2, 0>(q4, w), a(2));
            odd = O::dpbusd(O::dpbusd(odd, bytes<1, 2>(q, wt), a(1)), bytes<3, 2>(q4, wt), a(3));
        }
        return O::lanes(O::add32(even, odd));
    }
};

// Q2_K's fields under another name, for this form's TokenLanes and TokenAct.
template <class V>
struct Q2_KFieldsScaledBytes : Q2_KFields {};
template <class V>
using Q2_KScaled = SuperBlock<Q2_KFieldsScaledBytes<V>>;

template <class V>
struct TokenLanes<Q2_KFieldsScaledBytes<V>> {
    static constexpr bool kEnabled = true;
    template <class Head>
    static inline __m256i lanes(const uint8_t *p, const Head &, const ActKPairsG &x) {
        return Q2_KScaledBytes<V>::lanes(p, x);
    }
};
template <class V>
struct TokenAct<Q2_KScaled<V>> {
    using type = ActKPairsG;
    static inline ActKPairsG make(const uint8_t *a) { return act_k_pairs_g(a); }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
