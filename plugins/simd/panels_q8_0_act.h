// The VNNI panels (simd/panel_driver.h) of the formats paired with Q8_0 activations, written once
// over the panel vector V (16 rows on zmm in the AVX-512 builds, 8 rows on ymm in the 256-bit
// ones): Q8_0, Q4_0, MXFP4 (one term per 32-element block, fmaf((float)S, d_w * d_a, acc): 8 dot4 +
// cvt + mul + fma per panel of rows and activation) and NVFP4 (four 16-element terms). The
// weights are unsigned w + K; each activation's offset start -K * (its byte sum over the scale
// block) removes K exactly in int32. Every dot4 pair stays within vpmaddubsw's int16 range where
// V's dot4 is the AVX2 one (Q4_0 <= 2*15*128, MXFP4 and NVFP4 <= 2*24*128); Q8_0's w + 128 needs an
// exact dot4 (simd/formats_q8_0_act.h: kQ8_0Offset), so on AVX2 its panels hold the signed w and
// their magnitudes for the sign trick (K = 0, V::dot4_signed).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "simd/formats_q8_0_act.h"
#include "simd/panel_driver.h"

namespace memra::simd::MEMRA_SIMD_NS {

// The 32-element formats with one scale per block: one term, fmaf((float)S, d_w * d_a, acc).
// K = 0: signed panels P and their magnitudes A, dotted by the sign trick.
template <int K, class V>
struct Block32Panel : PerActivation<Block32Panel<K, V>> {
    static constexpr int kOffset = K;
    struct Act {
        int32_t start;  // -K * (sum of the activation block's 32 bytes)
        float d;        // d_a
    };
    static inline Act act(const uint8_t *a) {
        const ActOffset<K> x = act_offset<K>(a);  // lanes -K * (4-byte sums)
        const __m128i s = _mm_add_epi32(_mm256_castsi256_si128(x.base), _mm256_extracti128_si256(x.base, 1));
        return {_mm_cvtsi128_si32(hsum_epi32(s)), x.d};
    }
    struct Weights {
        typename V::I P[8];
        typename V::I A[K ? 1 : 8];  // K = 0: |w| of P
        typename V::F d;             // d_w of the rows
    };
    static inline void step(typename V::F &acc, const Weights &w, const Act &x, const uint8_t *a) {
        typename V::I s = V::set1_epi32(x.start);
        for (int g = 0; g < 8; ++g) {
            if constexpr (K == 0) s = V::dot4_signed(s, w.A[g], w.P[g], V::bcast32(a + 2 + 4 * g));
            else s = V::dot4(s, w.P[g], V::bcast32(a + 2 + 4 * g));
        }
        acc = V::fma(V::cvt(s), V::mul(w.d, V::set1_ps(x.d)), acc);
    }
};

template <class V>
struct PanelOf<Q8_0, V> : Block32Panel<kQ8_0Offset, V> {  // fp16 d | int8 qs[32]; w + 128, or w and |w|
    using Weights = typename Block32Panel<kQ8_0Offset, V>::Weights;
    static inline void decode(const uint8_t *const p[], Weights &w) {
        panel_transpose<V>(p, 2, w.P);
        panel_transpose<V>(p, 18, w.P + 4);
        for (int g = 0; g < 8; ++g) {
            if constexpr (kQ8_0Offset == 128) w.P[g] = V::xor_(w.P[g], V::set1_epi8(char(0x80)));
            else w.A[g] = V::abs_epi8(w.P[g]);
        }
        w.d = panel_fp16<V>(p);
    }
};

template <class V>
struct PanelOf<Q4_0, V> : Block32Panel<8, V> {  // fp16 d | qs[16]; q = w + 8
    using Weights = typename Block32Panel<8, V>::Weights;
    static inline void decode(const uint8_t *const p[], Weights &w) {
        nibble_panel<V>(p, 2, w.P);
        w.d = panel_fp16<V>(p);
    }
};

template <class V>
inline typename V::I fp4_table(int offset) {
    return V::add_epi8(V::broadcast128(load128(kValuesFp4)), V::set1_epi8(char(offset)));
}

template <class V>
struct PanelOf<MXFP4, V> : Block32Panel<MXFP4::kOffset, V> {  // E8M0 e | qs[16]; kvalues_fp4 + 12
    using Weights = typename Block32Panel<MXFP4::kOffset, V>::Weights;
    static inline void decode(const uint8_t *const p[], Weights &w) {
        nibble_panel<V>(p, 1, w.P);
        const typename V::I table = fp4_table<V>(MXFP4::kOffset);
        for (int g = 0; g < 8; ++g) w.P[g] = V::shuffle_epi8(table, w.P[g]);
        w.d = panel_f32<V>([&](int r) { return kE8m0Half.v[p[r][0]]; });
    }
};

// NVFP4 (UE4M3 d[4] | qs[32]): four 16-element sub-blocks, four terms in sub-block order, each
// fmaf((float)S_s, ue4m3_half(d[s]) * d_a(2b + s/2), acc). Sub-block s = 2h + u lies in bytes
// 16h + 8u .. + 7 of qs (byte t: element t lo, t + 8 hi) and pairs with bytes 16u .. 16u + 15 of
// Q8_0 block 2b + h: its panels are [lo, lo, hi, hi] of the transposed dwords 2u, 2u + 1.
template <class V>
struct PanelOf<NVFP4, V> : PerActivation<PanelOf<NVFP4, V>> {
    static constexpr int kOffset = NVFP4::kOffset;
    struct Act {
        int32_t start[4];  // -12 * (sum of the 16 activation bytes of sub-block s)
        float d[2];        // d_a of Q8_0 blocks 2b, 2b + 1
    };
    static inline Act act(const uint8_t *a) {
        Act x;
        for (int h = 0; h < 2; ++h) {
            const ActOffset<kOffset> q = act_offset<kOffset>(a + 34 * h);
            x.start[2 * h] = _mm_cvtsi128_si32(hsum_epi32(_mm256_castsi256_si128(q.base)));
            x.start[2 * h + 1] = _mm_cvtsi128_si32(hsum_epi32(_mm256_extracti128_si256(q.base, 1)));
            x.d[h] = q.d;
        }
        return x;
    }
    struct Weights {
        typename V::I P[4][4];  // [sub-block][dword group]
        typename V::F s[4];     // ue4m3_half(d[s]) of the rows
    };
    static inline void decode(const uint8_t *const p[], Weights &w) {
        const typename V::I table = fp4_table<V>(kOffset), m4 = V::set1_epi8(0x0F);
        for (int h = 0; h < 2; ++h) {
            typename V::I t[4];
            panel_transpose<V>(p, 4 + 16 * h, t);
            for (int u = 0; u < 2; ++u)
                for (int g = 0; g < 4; ++g) {
                    const typename V::I v = t[2 * u + (g & 1)];
                    const typename V::I code = V::and_(g < 2 ? v : V::srli4(v), m4);
                    w.P[2 * h + u][g] = V::shuffle_epi8(table, code);
                }
        }
        for (int s = 0; s < 4; ++s) w.s[s] = panel_f32<V>([&](int r) { return kUe4m3Half.v[p[r][s]]; });
    }
    static inline void step(typename V::F &acc, const Weights &w, const Act &x, const uint8_t *a) {
        for (int s = 0; s < 4; ++s) {
            const uint8_t *q = a + 34 * (s / 2) + 2 + 16 * (s % 2);
            typename V::I S = V::set1_epi32(x.start[s]);
            for (int g = 0; g < 4; ++g) S = V::dot4(S, w.P[s][g], V::bcast32(q + 4 * g));
            acc = V::fma(V::cvt(S), V::mul(w.s[s], V::set1_ps(x.d[s / 2])), acc);
        }
    }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
