// The AVX-512 build's VNNI panels (simd/wide512_panel_driver.h) of the formats paired with Q8_0
// activations: Q8_0, Q4_0, MXFP4 (one term per 32-element block, fmaf((float)S, d_w * d_a, acc):
// 8 vpdpbusd + cvt + mul + fma per 16 rows and activation) and NVFP4 (four 16-element terms).
// The weights are unsigned w + K; each activation's offset start -K * (its byte sum over the
// scale block) removes K exactly in int32. Included by simd/wide512_q8_0_act.h, whose
// PairsRowsPath::gemm takes the rows in panels first.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "simd/formats_q8_0_act.h"
#include "simd/wide512_panel_driver.h"

namespace memra::simd::MEMRA_SIMD_NS {

// A nibble format's panel (Q4_0, MXFP4: byte j of qs = element j lo, j + 16 hi): t[g]'s low
// nibbles are elements 4g .. 4g + 3, its high nibbles 16 + 4g .. 16 + 4g + 3.
inline void nibble_panel(const uint8_t *const p[kPanelRows], size_t qs, __m512i P[8]) {
    __m512i t[4];
    transpose16x4(p, qs, t);
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    for (int g = 0; g < 4; ++g) {
        P[g] = _mm512_and_si512(t[g], m4);
        P[4 + g] = _mm512_and_si512(_mm512_srli_epi16(t[g], 4), m4);
    }
}

// The 32-element formats with one scale per block: one term, fmaf((float)S, d_w * d_a, acc).
template <int K>
struct Block32Panel : PerActivation<Block32Panel<K>> {
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
        __m512i P[8];
        __m512 d;  // d_w of the 16 rows
    };
    static inline void step(__m512 &acc, const Weights &w, const Act &x, const uint8_t *a) {
        __m512i s = _mm512_set1_epi32(x.start);
        for (int g = 0; g < 8; ++g) s = _mm512_dpbusd_epi32(s, w.P[g], _mm512_set1_epi32(load_i32(a + 2 + 4 * g)));
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(w.d, _mm512_set1_ps(x.d)), acc);
    }
};

template <>
struct Panel<Q8_0> : Block32Panel<128> {  // fp16 d | int8 qs[32]; w + 128
    static_assert(kQ8_0Offset == 128, "the panel is the offset form");
    static inline void decode(const uint8_t *const p[kPanelRows], Weights &w) {
        transpose16x4(p, 2, w.P);
        transpose16x4(p, 18, w.P + 4);
        for (int g = 0; g < 8; ++g) w.P[g] = _mm512_xor_si512(w.P[g], _mm512_set1_epi8(char(0x80)));
        w.d = fp16_rows(p);
    }
};

template <>
struct Panel<Q4_0> : Block32Panel<8> {  // fp16 d | qs[16]; q = w + 8
    static inline void decode(const uint8_t *const p[kPanelRows], Weights &w) {
        nibble_panel(p, 2, w.P);
        w.d = fp16_rows(p);
    }
};

inline __m512i fp4_table(int offset) {
    return _mm512_add_epi8(_mm512_broadcast_i32x4(load128(kValuesFp4)), _mm512_set1_epi8(char(offset)));
}

template <>
struct Panel<MXFP4> : Block32Panel<MXFP4::kOffset> {  // E8M0 e | qs[16]; kvalues_fp4 + 12
    static inline void decode(const uint8_t *const p[kPanelRows], Weights &w) {
        nibble_panel(p, 1, w.P);
        const __m512i table = fp4_table(kOffset);
        for (int g = 0; g < 8; ++g) w.P[g] = _mm512_shuffle_epi8(table, w.P[g]);
        alignas(64) float s[kPanelRows];
        for (int r = 0; r < kPanelRows; ++r) s[r] = blocks::mxfp4::e8m0_half(p[r][0]);
        w.d = _mm512_load_ps(s);
    }
};

// NVFP4 (UE4M3 d[4] | qs[32]): four 16-element sub-blocks, four terms in sub-block order, each
// fmaf((float)S_s, ue4m3_half(d[s]) * d_a(2b + s/2), acc). Sub-block s = 2h + u lies in bytes
// 16h + 8u .. + 7 of qs (byte t: element t lo, t + 8 hi) and pairs with bytes 16u .. 16u + 15 of
// Q8_0 block 2b + h: its panels are [lo, lo, hi, hi] of the transposed dwords 2u, 2u + 1.
template <>
struct Panel<NVFP4> : PerActivation<Panel<NVFP4>> {
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
        __m512i P[4][4];  // [sub-block][dword group]
        __m512 s[4];      // ue4m3_half(d[s]) of the 16 rows
    };
    static inline void decode(const uint8_t *const p[kPanelRows], Weights &w) {
        const __m512i table = fp4_table(kOffset), m4 = _mm512_set1_epi8(0x0F);
        for (int h = 0; h < 2; ++h) {
            __m512i t[4];
            transpose16x4(p, 4 + 16 * h, t);
            for (int u = 0; u < 2; ++u)
                for (int g = 0; g < 4; ++g) {
                    const __m512i v = t[2 * u + (g & 1)];
                    const __m512i code = _mm512_and_si512(g < 2 ? v : _mm512_srli_epi16(v, 4), m4);
                    w.P[2 * h + u][g] = _mm512_shuffle_epi8(table, code);
                }
        }
        for (int s = 0; s < 4; ++s) {
            alignas(64) float v[kPanelRows];
            for (int r = 0; r < kPanelRows; ++r) v[r] = kUe4m3Half.v[p[r][s]];
            w.s[s] = _mm512_load_ps(v);
        }
    }
    static inline void step(__m512 &acc, const Weights &w, const Act &x, const uint8_t *a) {
        for (int s = 0; s < 4; ++s) {
            const uint8_t *q = a + 34 * (s / 2) + 2 + 16 * (s % 2);
            __m512i S = _mm512_set1_epi32(x.start[s]);
            for (int g = 0; g < 4; ++g) S = _mm512_dpbusd_epi32(S, w.P[s][g], _mm512_set1_epi32(load_i32(q + 4 * g)));
            acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(S), _mm512_mul_ps(w.s[s], _mm512_set1_ps(x.d[s / 2])), acc);
        }
    }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
