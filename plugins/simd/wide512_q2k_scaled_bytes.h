// Q2_K's token path with the sub-block scales inside the weight bytes (the Intel tuning's form,
// simd/wide512_token_tuned.h): w = q sc (0..45, one unsigned byte) looked up by one in-lane
// vpshufb per chunk pair from a per-block table, dotted by one vpdpbusd, where the chunk pairs
// (simd/wide512_q8_K_act.h Q2_KPairs) take vpsrlvq + vpmaddubsw + vpdpwssd, three port-0 uops
// on Sapphire Rapids, per pair. Per block here: 4 vpdpbusd + 1 vpsrlw on port 0, the table and
// index work on ports 0/5 and 5. The int32 lanes differ from the pairs' but sum to the same exact
// S (every product and sum is an exact small integer), so the bits are those of every build.
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

// Per block: W (byte 16 L + 4 g + f = f x scale of the sub-block lane L of pair g holds) and its
// in-lane transpose W' (byte 16 L + 4 f + g): each 16-byte lane one vpshufb table for all four
// pairs. Pair g's lanes hold field g of qs[0..31] (sub-blocks 2g, 2g + 1) | of qs[32..63]
// (8 + 2g, 9 + 2g); a field at bits 0-1 indexes W by 4 g + f, one at bits 2-3 W' by 4 f + g,
// each index one vpternlogq (field masked in place, g merged). vpshufb needs no VBMI (the
// AVX-512 builds' ISA has none).
struct Q2_KScaledBytes {
    struct alignas(64) Bytes64 {
        int8_t v[64];
        __m512i zmm() const { return _mm512_load_si512(v); }
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
    static inline __m512i table_w(const uint8_t *p) {
        static constexpr Bytes64 idx = w_index();
        const __m512i s = _mm512_and_si512(_mm512_shuffle_epi8(_mm512_broadcast_i32x4(load128(p)), idx.zmm()),
                                           _mm512_set1_epi8(0x0F));
        // f x s for f = byte % 4: s where f is odd, plus 2 s where f >= 2
        const __m512i w = _mm512_maskz_mov_epi8(__mmask64(0xAAAAAAAAAAAAAAAAull), s);
        return _mm512_mask_add_epi8(w, __mmask64(0xCCCCCCCCCCCCCCCCull), w, _mm512_add_epi8(s, s));
    }
    // Pair g's weight bytes: field (3 << At) of q masked in place, the table's other index bits
    // (g at bits 2-3 for At = 0, at bits 0-1 for At = 2) merged in by one vpternlogq.
    template <int G, int At>
    static inline __m512i bytes(__m512i q, __m512i table) {
        constexpr int g_bits = At == 0 ? 4 * (G % 4) : G % 4;
        const __m512i idx = _mm512_ternarylogic_epi64(q, _mm512_set1_epi8(int8_t(3 << At)),
                                                      _mm512_set1_epi8(int8_t(g_bits)), 0xEA);  // (q & m) | g
        return _mm512_shuffle_epi8(table, idx);
    }
    static inline __m256i lanes(const uint8_t *p, const ActKPairsG &x) {
        static constexpr Bytes64 tr = transpose_index();
        const __m512i w = table_w(p), wt = _mm512_shuffle_epi8(w, tr.zmm());
        const __m512i q = _mm512_loadu_si512(p + 16), q4 = _mm512_srli_epi16(q, 4);
        const __m512i w0 = bytes<0, 0>(q, w), w1 = bytes<1, 2>(q, wt);
        const __m512i w2 = bytes<2, 0>(q4, w), w3 = bytes<3, 2>(q4, wt);
        auto a = [&](int g) { return _mm512_load_si512(x.qs + 64 * g); };
        const __m512i even = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), w0, a(0)), w2, a(2));
        const __m512i odd = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), w1, a(1)), w3, a(3));
        return WideLanes<true>::fold(_mm512_add_epi32(even, odd));
    }
};

// Q2_K's fields under another name, for this form's TokenLanes and TokenAct.
struct Q2_KFieldsScaledBytes : Q2_KFields {};
using Q2_KScaled = SuperBlock<Q2_KFieldsScaledBytes>;

template <>
struct TokenLanes<Q2_KFieldsScaledBytes> {
    static constexpr bool kEnabled = true;
    template <class Head>
    static inline __m256i lanes(const uint8_t *p, const Head &, const ActKPairsG &x) {
        return Q2_KScaledBytes::lanes(p, x);
    }
};
template <>
struct TokenAct<Q2_KScaled> {
    using type = ActKPairsG;
    static inline ActKPairsG make(const uint8_t *a) { return act_k_pairs_g(a); }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
