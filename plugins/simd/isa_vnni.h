// ISA layer: VNNI on 256-bit registers. The selection header defines MEMRA_SIMD_DPBUSD and
// MEMRA_SIMD_DPWSSD as the intrinsics: _mm256_dpbusd_avx_epi32 / _mm256_dpwssd_avx_epi32
// (AVX-VNNI, VEX) or _mm256_dpbusd_epi32 / _mm256_dpwssd_epi32 (AVX512-VNNI + AVX512VL, EVEX).
// vpdpbusd sums the four u8*s8 products of each int32 lane exactly (no int16 intermediate, no
// saturation). The scaled form keeps vpmaddubsw (the formats guarantee its pairs fit int16, see
// simd/formats_q8_K_act.h) and fuses the scale multiply-add into vpdpwssd; every result is the
// same exact integer as the AVX2 layer's.
#pragma once

#include <immintrin.h>

#if !defined(MEMRA_SIMD_DPBUSD) || !defined(MEMRA_SIMD_DPWSSD)
#error "isa_select.h must define MEMRA_SIMD_DPBUSD and MEMRA_SIMD_DPWSSD before including simd/isa_vnni.h"
#endif

namespace memra::simd::MEMRA_SIMD_NS {

struct Isa {
    static inline __m256i dot4(__m256i acc, __m256i u, __m256i s) { return MEMRA_SIMD_DPBUSD(acc, u, s); }
    static inline __m256i dot4_scaled(__m256i acc, __m256i u, __m256i s, __m256i sc) {
        return MEMRA_SIMD_DPWSSD(acc, _mm256_maddubs_epi16(u, s), sc);
    }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
