// Weight formats paired with Q8_0 activations (Q8_0, Q4_0, NVFP4): decode-and-dot written once
// over the ISA layer, in the order of scalar/dot_q8_0_act.cpp: per 32-element block one fma of
// the int lanes with the block's scale d_w * d_a, then hsum8.
#pragma once

#include "common/fp_convert.h"
#include "common/tables.h"
#include "simd/common.h"
#include "simd/ue4m3_table.h"

namespace memra::simd::MEMRA_SIMD_NS {

// The signed weights of one 32-element block, kept as |w| and w for the sign trick:
// w*a = |w| * (a * sign(w)). |w| <= 128 and |a| <= 127 (the canonical Q8_0 quantizer never
// writes -128 for finite input), so a vpmaddubsw pair is at most 2*128*127 = 32512.
struct SignedBlock32 {
    __m256i w, aw;
    float d;
};

struct Acc8 {
    __m256 acc;
};

// One Q8_0 activation block, prepared once and shared by the rows of a tile.
struct Act0 {
    const uint8_t *a;
    float d;
};

struct Block32Common {
    static constexpr int kElems = 32;
    static constexpr size_t kActBytes = 34;
    using Act = Act0;
    static inline Act act(const uint8_t *a) { return {a, fp16(a)}; }
    using Block = SignedBlock32;
    using Acc = Acc8;
    static inline Acc init() { return {_mm256_setzero_ps()}; }
    template <bool Wide>
    static inline void step(Acc &s, const Block &b, const Act &x) {
        const __m256i lanes = Isa::dot4(_mm256_setzero_si256(), b.aw, _mm256_sign_epi8(load256(x.a + 2), b.w));
        s.acc = _mm256_fmadd_ps(_mm256_set1_ps(b.d * x.d), _mm256_cvtepi32_ps(lanes), s.acc);
    }
    static inline float finish(const Acc &s) { return hsum8(s.acc); }
};

struct Q8_0 : Block32Common {  // fp16 d | int8 qs[32]
    static constexpr size_t kBytes = 34;
    static inline void decode(const uint8_t *p, Block &b) {
        b.w = load256(p + 2);
        b.aw = _mm256_abs_epi8(b.w);
        b.d = fp16(p);
    }
};

struct Q4_0 : Block32Common {  // fp16 d | qs[16]: byte j = element j (lo), j + 16 (hi); q - 8
    static constexpr size_t kBytes = 18;
    static inline void decode(const uint8_t *p, Block &b) {
        b.w = _mm256_sub_epi8(nibbles_lo_hi(load128(p + 2)), _mm256_set1_epi8(8));
        b.aw = _mm256_abs_epi8(b.w);
        b.d = fp16(p);
    }
};

// NVFP4: UE4M3 d[4] | qs[32]; sub-block s of 16: byte t = element t (lo), t + 8 (hi). Half h
// (32 values) pairs with Q8_0 block 2b + h; lanes 0-3 use sub-block 2h, lanes 4-7 sub-block
// 2h + 1. Values kvalues_fp4 in -12..12.
struct NVFP4 {
    static constexpr int kElems = 64;
    static constexpr size_t kBytes = 36;
    static constexpr size_t kActBytes = 68;
    struct Act {
        const uint8_t *a;
        float d[2];
    };
    static inline Act act(const uint8_t *a) { return {a, {fp16(a), fp16(a + 34)}}; }
    struct Block {
        __m256i w[2], aw[2];
        float s[4];
    };
    using Acc = Acc8;
    static inline Acc init() { return {_mm256_setzero_ps()}; }
    static inline void decode(const uint8_t *p, Block &b) {
        const __m256i table = _mm256_broadcastsi128_si256(load128(kValuesFp4));
        const __m128i m4 = _mm_set1_epi8(0x0F);
        for (int h = 0; h < 2; ++h) {
            const __m128i x = load128(p + 4 + 16 * h);
            const __m128i lo = _mm_and_si128(x, m4), hi = _mm_and_si128(_mm_srli_epi16(x, 4), m4);
            const __m256i codes = _mm256_setr_m128i(_mm_unpacklo_epi64(lo, hi), _mm_unpackhi_epi64(lo, hi));
            b.w[h] = _mm256_shuffle_epi8(table, codes);
            b.aw[h] = _mm256_abs_epi8(b.w[h]);
        }
        for (int s = 0; s < 4; ++s) b.s[s] = kUe4m3Half.v[p[s]];
    }
    template <bool Wide>
    static inline void step(Acc &st, const Block &b, const Act &x) {
        for (int h = 0; h < 2; ++h) {
            const uint8_t *ab = x.a + 34 * h;
            const float da = x.d[h];
            const __m256i lanes = Isa::dot4(_mm256_setzero_si256(), b.aw[h], _mm256_sign_epi8(load256(ab + 2), b.w[h]));
            const __m256 scale = _mm256_setr_m128(_mm_set1_ps(b.s[2 * h] * da), _mm_set1_ps(b.s[2 * h + 1] * da));
            st.acc = _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(lanes), st.acc);
        }
    }
    static inline float finish(const Acc &s) { return hsum8(s.acc); }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
