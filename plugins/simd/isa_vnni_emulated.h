// ISA layer for tests only: the VNNI layer (isa_vnni.h) with its two instructions emulated
// exactly on AVX2. vpdpbusd: the unsigned bytes are split into nibbles, u = lo + 16 hi with
// lo, hi in 0..15, so no vpmaddubsw pair can saturate (at most 2*15*128) and the lanes are
// L + 16 H, exactly vpdpbusd's for any u8 x s8 input. vpdpwssd: vpmaddwd + vpaddd (both wrap
// like vpdpwssd). Built as plugins/avxvnni_emulated so the VNNI code path is tested on CPUs
// without AVX-VNNI.
#pragma once

#include <immintrin.h>

#include "simd/superblock_lanes.h"

namespace memra::simd::MEMRA_SIMD_NS {

struct Isa {
    // dot4 is exact for ANY u8 x s8 operands (no int16 pair saturation): formats may use
    // u = w + 128 against s = a (formats_q8_0_act.h).
    static constexpr bool kExactDot4 = true;
    static inline __m256i dpbusd(__m256i acc, __m256i u, __m256i s) {
        const __m256i m4 = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
        const __m256i lo = _mm256_and_si256(u, m4);
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(u, 4), m4);
        const __m256i l = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, s), ones);
        const __m256i h = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, s), ones);
        return _mm256_add_epi32(acc, _mm256_add_epi32(l, _mm256_slli_epi32(h, 4)));
    }
    static inline __m256i dpwssd(__m256i acc, __m256i a, __m256i b) {
        return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b));
    }
    static inline __m256i dot4(__m256i acc, __m256i u, __m256i s) { return dpbusd(acc, u, s); }
    static inline __m256i dot4_scaled(__m256i acc, __m256i u, __m256i s, __m256i sc) {
        return dot2_scaled(acc, _mm256_maddubs_epi16(u, s), sc);
    }
    static inline __m256i dot2_scaled(__m256i acc, __m256i p, __m256i sc) { return dpwssd(acc, p, sc); }
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
