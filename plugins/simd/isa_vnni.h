// ISA layer: a VNNI vpdpbusd on 256-bit registers. The selection header defines
// MEMRA_SIMD_DPBUSD as the intrinsic: _mm256_dpbusd_avx_epi32 (AVX-VNNI, VEX) or
// _mm256_dpbusd_epi32 (AVX512-VNNI + AVX512VL, EVEX). vpdpbusd sums the four u8*s8 products of
// each int32 lane exactly (no int16 intermediate, no saturation), so it gives the same lanes as
// the AVX2 layer wherever that one is exact.
#pragma once

#include <immintrin.h>

#ifndef MEMRA_SIMD_DPBUSD
#error "isa_select.h must define MEMRA_SIMD_DPBUSD before including simd/isa_vnni.h"
#endif

namespace memra::simd::MEMRA_SIMD_NS {

struct Isa {
    static inline __m256i dot4(__m256i acc, __m256i u, __m256i s) { return MEMRA_SIMD_DPBUSD(acc, u, s); }
    // int32 multipliers: lanes 0-3 `lo`, lanes 4-7 `hi`.
    static inline __m256i scales(int lo, int hi) {
        return _mm256_setr_m128i(_mm_set1_epi32(lo), _mm_set1_epi32(hi));
    }
    static inline __m256i dot4_scaled(__m256i acc, __m256i u, __m256i s, __m256i sc) {
        return _mm256_add_epi32(acc, _mm256_mullo_epi32(MEMRA_SIMD_DPBUSD(_mm256_setzero_si256(), u, s), sc));
    }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
