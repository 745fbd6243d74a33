// ISA layer: VNNI on 256-bit registers. The selection header defines MEMRA_SIMD_DPBUSD and
// MEMRA_SIMD_DPWSSD as the intrinsics: _mm256_dpbusd_avx_epi32 / _mm256_dpwssd_avx_epi32
// (AVX-VNNI, VEX) or _mm256_dpbusd_epi32 / _mm256_dpwssd_epi32 (AVX512-VNNI + AVX512VL, EVEX).
// vpdpbusd sums the four u8*s8 products of each int32 lane exactly (no int16 intermediate, no
// saturation). The scaled form keeps vpmaddubsw (the formats guarantee its pairs fit int16, see
// simd/formats_q8_K_act.h) and fuses the scale multiply-add into vpdpwssd; every result is the
// same exact integer as the AVX2 layer's. In the AVX-512 build (MEMRA_SIMD_WIDE512) the
// super-block loop of the rows path runs on chunk pairs in 512-bit registers: simd/wide512_isa.h.
#pragma once

#include <immintrin.h>

#include "simd/superblock_lanes.h"

#if !defined(MEMRA_SIMD_DPBUSD) || !defined(MEMRA_SIMD_DPWSSD)
#error "isa_select.h must define MEMRA_SIMD_DPBUSD and MEMRA_SIMD_DPWSSD before including simd/isa_vnni.h"
#endif

namespace memra::simd::MEMRA_SIMD_NS {

// A wider layer's super-block lanes for the rows path (kEnabled, scaled_lanes8,
// signed_scaled_lanes8): specialized for true by simd/wide512_isa.h in the AVX-512 build only.
template <bool Wide>
struct WideLanes {
    static constexpr bool kEnabled = false;
};

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

    // The rows path (Wide) takes a wider form where the build has one (WideLanes<true>,
    // simd/wide512_isa.h in the AVX-512 build); elsewhere, and on the token path, the 256-bit one.
    template <bool Wide = false>
    static inline __m256i scaled_lanes8(const __m256i q[8], const __m256i sc[8], const int8_t *a) {
        if constexpr (WideLanes<Wide>::kEnabled) return WideLanes<Wide>::scaled_lanes8(q, sc, a);
        else return scaled_lanes8_256(q, sc, a);
    }
    template <bool Wide = false>
    static inline __m256i signed_scaled_lanes8(const __m256i q[8], const __m256i aq[8], const __m256i sc[8],
                                               const int8_t *a) {
        if constexpr (WideLanes<Wide>::kEnabled) return WideLanes<Wide>::signed_scaled_lanes8(q, aq, sc, a);
        else return signed_scaled_lanes8_256(q, aq, sc, a);
    }
};

}  // namespace memra::simd::MEMRA_SIMD_NS

#ifdef MEMRA_SIMD_WIDE512
#include "simd/wide512_isa.h"
#endif
