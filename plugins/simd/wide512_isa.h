// The AVX-512 build's rows-path super-block lanes (AVX-512BW + VNNI), included by simd/isa_vnni.h
// only where the ISA selection defines MEMRA_SIMD_WIDE512. Only on the rows path (Isa's
// scaled_lanes8<true>): there the decoded chunks were stored long before, while on the token path
// a 512-bit reload of two fresh 256-bit stores would stall. Every int lane is the exact integer
// of the 256-bit form (simd/superblock_lanes.h), so the results are those of every other build.
#pragma once

#include <immintrin.h>

#include "simd/isa_vnni.h"

namespace memra::simd::MEMRA_SIMD_NS {

template <>
struct WideLanes<true> {
    static constexpr bool kEnabled = true;
    // Two chunks per 512-bit instruction (even chunks in the low half, odd in the high half),
    // folded back into the same 8 int lanes before any float work.
    static inline __m256i fold(__m512i v) {
        return _mm512_castsi512_si256(_mm512_add_epi32(v, _mm512_shuffle_i64x2(v, v, 0x4E)));
    }
    static inline __m256i scaled_lanes8(const __m256i q[8], const __m256i sc[8], const int8_t *a) {
        __m512i sumi = _mm512_setzero_si512();
        for (int c = 0; c < 8; c += 2)
            sumi = _mm512_dpwssd_epi32(
                sumi, _mm512_maddubs_epi16(_mm512_loadu_si512(&q[c]), _mm512_loadu_si512(a + 32 * c)),
                _mm512_loadu_si512(&sc[c]));
        return fold(sumi);
    }
    // The sign trick without vpsignb: negate a where q < 0 (where q == 0, |q| == 0 and the sign
    // does not matter).
    static inline __m256i signed_scaled_lanes8(const __m256i q[8], const __m256i aq[8], const __m256i sc[8],
                                               const int8_t *a) {
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
};

}  // namespace memra::simd::MEMRA_SIMD_NS
