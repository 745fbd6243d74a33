// ISA layer: AVX2 (+FMA, F16C). The u8 x s8 dot-accumulate is vpmaddubsw + vpmaddwd, as in
// ggml's AVX2 kernels. vpmaddubsw saturates int16, so callers only pass operands for which every
// adjacent pair satisfies |u0*s0 + u1*s1| <= 32767 (each format states its ranges in
// simd/formats.h); within those ranges the result is the exact integer, like vpdpbusd's.
#pragma once

#include <immintrin.h>

#include "simd/superblock_lanes.h"

namespace memra::simd::MEMRA_SIMD_NS {

struct Isa {
    // dot4 is exact for ANY u8 x s8 operands (no int16 pair saturation): formats may use
    // u = w + 128 against s = a (formats_q8_0_act.h).
    static constexpr bool kExactDot4 = false;
    // acc + lane k = sum_{t<4} u[4k+t] * s[4k+t] (u unsigned bytes, s signed bytes).
    static inline __m256i dot4(__m256i acc, __m256i u, __m256i s) {
        return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
    }
    // acc + sc * dot4(0, u, s) with sc the int16 multipliers (chunk_scale of
    // simd/formats_q8_K_act.h). The scale multiplies the int16 pair sums (vpmaddwd): the same exact
    // integer as multiplying the int32 lanes.
    static inline __m256i dot4_scaled(__m256i acc, __m256i u, __m256i s, __m256i sc) {
        return dot2_scaled(acc, _mm256_maddubs_epi16(u, s), sc);
    }
    // acc + lane k = p[2k] sc[2k] + p[2k+1] sc[2k+1] (int16 pair sums p times the multipliers).
    static inline __m256i dot2_scaled(__m256i acc, __m256i p, __m256i sc) {
        return _mm256_add_epi32(acc, _mm256_madd_epi16(p, sc));
    }
    // The int lanes of one 256-element super-block (simd/superblock_lanes.h).
    template <bool Wide = false>
    static inline __m256i scaled_lanes8(const __m256i q[8], const __m256i sc[8], const int8_t *a) {
        return superblock_scaled_lanes<Isa>(q, sc, a);
    }
    template <bool Wide = false>
    static inline __m256i signed_scaled_lanes8(const __m256i q[8], const __m256i aq[8], const __m256i sc[8],
                                               const int8_t *a) {
        return superblock_signed_scaled_lanes<Isa>(q, aq, sc, a);
    }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
