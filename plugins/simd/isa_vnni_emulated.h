// ISA layer for tests only: the VNNI layer's logic (int32 scale multipliers, dot4 of full-range
// u8 x s8) with vpdpbusd emulated on AVX2. The unsigned bytes are split into nibbles,
// u = lo + 16 hi with lo, hi in 0..15, so each vpmaddubsw pair is at most 2*15*128 and cannot
// saturate; the lanes are L + 16 H, exactly vpdpbusd's. Built as plugins/avxvnni_emulated so the
// VNNI code path is tested on CPUs without AVX-VNNI.
#pragma once

#include <immintrin.h>

namespace memra::simd::MEMRA_SIMD_NS {

struct Isa {
    static inline __m256i dpbusd(__m256i acc, __m256i u, __m256i s) {
        const __m256i m4 = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
        const __m256i lo = _mm256_and_si256(u, m4);
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(u, 4), m4);
        const __m256i l = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, s), ones);
        const __m256i h = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, s), ones);
        return _mm256_add_epi32(acc, _mm256_add_epi32(l, _mm256_slli_epi32(h, 4)));
    }
    static inline __m256i dot4(__m256i acc, __m256i u, __m256i s) { return dpbusd(acc, u, s); }
    static inline __m256i scales(int lo, int hi) {
        return _mm256_setr_m128i(_mm_set1_epi32(lo), _mm_set1_epi32(hi));
    }
    static inline __m256i dot4_scaled(__m256i acc, __m256i u, __m256i s, __m256i sc) {
        return _mm256_add_epi32(acc, _mm256_mullo_epi32(dpbusd(_mm256_setzero_si256(), u, s), sc));
    }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
