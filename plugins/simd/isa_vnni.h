// ISA layer: VNNI on 256-bit registers. The selection header defines MEMRA_SIMD_DPBUSD and
// MEMRA_SIMD_DPWSSD as the intrinsics: _mm256_dpbusd_avx_epi32 / _mm256_dpwssd_avx_epi32
// (AVX-VNNI, VEX) or _mm256_dpbusd_epi32 / _mm256_dpwssd_epi32 (AVX512-VNNI + AVX512VL, EVEX).
// vpdpbusd sums the four u8*s8 products of each int32 lane exactly (no int16 intermediate, no
// saturation). The scaled form keeps vpmaddubsw (the formats guarantee its pairs fit int16, see
// simd/formats_q8_K_act.h) and fuses the scale multiply-add into vpdpwssd; every result is the
// same exact integer as the AVX2 layer's. With MEMRA_SIMD_WIDE512 (the AVX-512 build) the
// super-block loop of the rows path runs on chunk pairs in 512-bit registers.
#pragma once

#include <immintrin.h>

#include "simd/superblock_lanes.h"

#if !defined(MEMRA_SIMD_DPBUSD) || !defined(MEMRA_SIMD_DPWSSD)
#error "isa_select.h must define MEMRA_SIMD_DPBUSD and MEMRA_SIMD_DPWSSD before including simd/isa_vnni.h"
#endif

namespace memra::simd::MEMRA_SIMD_NS {

struct Isa {
    // dot4 is exact for ANY u8 x s8 operands (no int16 pair saturation): formats may use
    // u = w + 128 against s = a (formats_q8_0_act.h).
    static constexpr bool kExactDot4 = true;
    static inline __m256i dot4(__m256i acc, __m256i u, __m256i s) { return MEMRA_SIMD_DPBUSD(acc, u, s); }
    static inline __m256i dot4_scaled(__m256i acc, __m256i u, __m256i s, __m256i sc) {
        return dot2_scaled(acc, _mm256_maddubs_epi16(u, s), sc);
    }
    static inline __m256i dot2_scaled(__m256i acc, __m256i p, __m256i sc) { return MEMRA_SIMD_DPWSSD(acc, p, sc); }

    // The int lanes of one 256-element super-block (simd/superblock_lanes.h).
    static inline __m256i scaled_lanes8_256(const __m256i q[8], const __m256i sc[8], const int8_t *a) {
        return superblock_scaled_lanes<Isa>(q, sc, a);
    }
    static inline __m256i signed_scaled_lanes8_256(const __m256i q[8], const __m256i aq[8], const __m256i sc[8],
                                                   const int8_t *a) {
        return superblock_signed_scaled_lanes<Isa>(q, aq, sc, a);
    }

#ifndef MEMRA_SIMD_WIDE512
    template <bool Wide = false>
    static inline __m256i scaled_lanes8(const __m256i q[8], const __m256i sc[8], const int8_t *a) {
        return scaled_lanes8_256(q, sc, a);
    }
    template <bool Wide = false>
    static inline __m256i signed_scaled_lanes8(const __m256i q[8], const __m256i aq[8], const __m256i sc[8],
                                               const int8_t *a) {
        return signed_scaled_lanes8_256(q, aq, sc, a);
    }
#else
    // AVX-512BW + VNNI: two chunks per 512-bit instruction (even chunks in the low half, odd in
    // the high half), folded back into the same 8 int lanes before any float work. The sign
    // trick without vpsignb: negate a where q < 0 (where q == 0, |q| == 0 and the sign does
    // not matter). Only on the rows path (Wide): there the decoded chunks were stored long
    // before, while on the token path a 512-bit reload of two fresh 256-bit stores would stall.
    static inline __m256i fold(__m512i v) {
        return _mm512_castsi512_si256(_mm512_add_epi32(v, _mm512_shuffle_i64x2(v, v, 0x4E)));
    }
    template <bool Wide = false>
    static inline __m256i scaled_lanes8(const __m256i q[8], const __m256i sc[8], const int8_t *a) {
        if constexpr (!Wide) {
            return scaled_lanes8_256(q, sc, a);
        } else {
            __m512i sumi = _mm512_setzero_si512();
            for (int c = 0; c < 8; c += 2)
                sumi = _mm512_dpwssd_epi32(
                    sumi, _mm512_maddubs_epi16(_mm512_loadu_si512(&q[c]), _mm512_loadu_si512(a + 32 * c)),
                    _mm512_loadu_si512(&sc[c]));
            return fold(sumi);
        }
    }
    template <bool Wide = false>
    static inline __m256i signed_scaled_lanes8(const __m256i q[8], const __m256i aq[8], const __m256i sc[8],
                                               const int8_t *a) {
        if constexpr (!Wide) {
            return signed_scaled_lanes8_256(q, aq, sc, a);
        } else {
            __m512i sumi = _mm512_setzero_si512();
            for (int c = 0; c < 8; c += 2) {
                const __m512i av = _mm512_loadu_si512(a + 32 * c);
                const __m512i s = _mm512_mask_sub_epi8(av, _mm512_movepi8_mask(_mm512_loadu_si512(&q[c])),
                                                       _mm512_setzero_si512(), av);
                sumi = _mm512_dpwssd_epi32(sumi, _mm512_maddubs_epi16(_mm512_loadu_si512(&aq[c]), s),
                                           _mm512_loadu_si512(&sc[c]));
            }
            return fold(sumi);
        }
    }
#endif
};

}  // namespace memra::simd::MEMRA_SIMD_NS
