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

#include "simd/panel_driver.h"
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
        _mm256_store_si256(reinterpret_cast<__m256i *>(x.qs + 64 * g),
                           load256(q8k::qs(a) + 32 * g));
        _mm256_store_si256(reinterpret_cast<__m256i *>(x.qs + 64 * g + 32),
                           load256(q8k::qs(a) + 128 + 32 * g));
    }
    return x;
}

// The vector ops of the form on a zmm (two chunks a step: Intel's 512-bit form) or a ymm (one
// chunk a step, no vector op losing port 1 to a 512-bit one): the panel vectors' ops
// (MEMRA_PANEL_VEC_OPS) and the masked byte ops, loads and dot written once for both widths.
#define MEMRA_SCALED_BYTES_OPS(P, SI, MASK)                                                  \
    MEMRA_PANEL_VEC_OPS(P, SI)                                                               \
    using Mask = MASK;                                                                       \
    static inline I loadu(const void *p) { return P##_loadu_##SI(static_cast<const I *>(p)); } \
    static inline I maskz_mov8(Mask k, I a) { return P##_maskz_mov_epi8(k, a); }             \
    static inline I mask_add8(I s, Mask k, I a, I b) { return P##_mask_add_epi8(s, k, a, b); } \
    static inline I dpbusd(I acc, I u, I s) { return P##_dpbusd_epi32(acc, u, s); }
template <int Bits>
struct ScaledBytesOps;
template <>
struct ScaledBytesOps<512> {
    using I = __m512i;
    using F = __m512;
    MEMRA_SCALED_BYTES_OPS(_mm512, si512, __mmask64)
    static inline I load_scales(const uint8_t *p) { return _mm512_broadcast_i32x4(load128(p)); }
    static inline __m256i lanes(I v) { return WideLanes<true>::fold(v); }
};
template <>
struct ScaledBytesOps<256> {
    using I = __m256i;
    using F = __m256;
    MEMRA_SCALED_BYTES_OPS(_mm256, si256, __mmask32)
    static inline I load_scales(const uint8_t *p) { return broadcast128(load128(p)); }
    static inline __m256i lanes(I v) { return v; }
};
#undef MEMRA_SCALED_BYTES_OPS

// Per block: W (byte 16 L + 4 g + f = f x scale of the sub-block lane L of pair g holds) and its
// in-lane transpose W' (byte 16 L + 4 f + g): each 16-byte lane one vpshufb table for all four
// pairs. Pair g's lanes hold field g of qs[0..31] (sub-blocks 2g, 2g + 1) | of qs[32..63]
// (8 + 2g, 9 + 2g); a field at bits 0-1 indexes W by 4 g + f, one at bits 2-3 W' by 4 f + g,
// each index one vpternlogq (field masked in place, g merged). vpshufb needs no VBMI (the
// AVX-512 builds' ISA has none). On ymm, half h of each: chunk 4 h + g, W's lanes 2 h, 2 h + 1.
template <int Bits>
struct Q2_KScaledBytes {
    using O = ScaledBytesOps<Bits>;
    using V = typename O::I;
    static constexpr int kHalves = int(64 / sizeof(V));
    struct alignas(64) Bytes64 {
        int8_t v[64];
    };
    // lane L, byte 4 g + f: scale byte 2 g + (L & 1) + 8 (L >> 1)
    static constexpr Bytes64 w_index() {
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
        const V sel = O::loadu(idx.v + sizeof(V) * h);
        const V s = O::and_(O::shuffle_epi8(O::load_scales(p), sel), O::set1_epi8(0x0F));
        // f x s for f = byte % 4: s where f is odd, plus 2 s where f >= 2
        const V w = O::maskz_mov8(typename O::Mask(0xAAAAAAAAAAAAAAAAull), s);
        return O::mask_add8(w, typename O::Mask(0xCCCCCCCCCCCCCCCCull), w, O::add_epi8(s, s));
    }
    // Pair g's weight bytes: field (3 << At) of q masked in place, the table's other index bits
    // (g at bits 2-3 for At = 0, at bits 0-1 for At = 2) merged in by one vpternlogq.
    template <int G, int At>
    static inline V bytes(V q, V table) {
        constexpr int g_bits = At == 0 ? 4 * G : G;
        const V idx = or_masked(O::set1_epi8(int8_t(g_bits)), q, O::set1_epi8(int8_t(3 << At)));
        return O::shuffle_epi8(table, idx);
    }
    static inline __m256i lanes(const uint8_t *p, const ActKPairsG &x) {
        static constexpr Bytes64 tr = transpose_index();
        V even = O::zero_i(), odd = O::zero_i();
        for (int h = 0; h < kHalves; ++h) {
            const V w = table_w(p, h), wt = O::shuffle_epi8(w, O::loadu(tr.v));
            const V q = O::loadu(p + 16 + sizeof(V) * h), q4 = O::srli_epi16(q, 4);
            auto a = [&](int g) { return O::loadu(x.qs + 64 * g + sizeof(V) * h); };
            even = O::dpbusd(O::dpbusd(even, bytes<0, 0>(q, w), a(0)), bytes<2, 0>(q4, w), a(2));
            odd = O::dpbusd(O::dpbusd(odd, bytes<1, 2>(q, wt), a(1)), bytes<3, 2>(q4, wt), a(3));
        }
        return O::lanes(O::add_epi32(even, odd));
    }
};

// Q2_K's fields under another name, for this form's TokenLanes and TokenAct.
template <int Bits>
struct Q2_KFieldsScaledBytes : Q2_KFields {};
template <int Bits>
using Q2_KScaled = SuperBlock<Q2_KFieldsScaledBytes<Bits>>;

template <int Bits>
struct TokenLanes<Q2_KFieldsScaledBytes<Bits>> {
    static constexpr bool kEnabled = true;
    template <class Head>
    static inline __m256i lanes(const uint8_t *p, const Head &, const ActKPairsG &x) {
        return Q2_KScaledBytes<Bits>::lanes(p, x);
    }
};
template <int Bits>
struct TokenAct<Q2_KScaled<Bits>> {
    using type = ActKPairsG;
    static inline ActKPairsG make(const uint8_t *a) { return act_k_pairs_g(a); }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
