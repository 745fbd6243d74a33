// IQ3_S's token path on ymm with the AVX-512 builds' masks (the Intel tuning's form,
// simd/wide512_token_tuned.h): per 32-element chunk the explicit sign bits become the mask of one
// masked vpsubb on the activations (kmovd straight from the block), and the grid index's 9th bit
// one vpsllvd + vpternlogd of a dword broadcast load, where the token path's own form
// (IQ3_SFields::chunk) spreads the sign bits to bytes (vpshufb, vpand, vpcmpeqb, vpor) for
// vpsignb and moves the qh bit by vpsrlvd, vpand, vpslld, vpor: about 8 vector uops per chunk
// besides the gather where it took about 15 (Sapphire Rapids, the token call compute-bound at
// 0.93 of v1). Nothing 512-bit, so port 1 stays open. Same magnitudes, same signed activations,
// the same int lanes: the same bits.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <utility>

#include "simd/wide512_q8_K_act.h"

namespace memra::simd::MEMRA_SIMD_NS {

struct IQ3_SMaskSigns {
    template <int C>
    static inline __m256i chunk_dot(__m256i acc, const uint8_t *p, const IQ3_SFields::Head &h,
                                    const uint8_t *a) {
        // grid index of group k: qs[8 C + k] | bit k of qh[C] << 8, that is bit 8 of qh[C]'s
        // dword (a broadcast load: the bytes after it shift out of the mask) << 8 - k
        uint32_t qh, bits;
        std::memcpy(&qh, p + 66 + C, 4);
        std::memcpy(&bits, p + 74 + 4 * C, 4);
        const __m256i lo =
            _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(p + 2 + 8 * C)));
        const __m256i hi = _mm256_sllv_epi32(_mm256_set1_epi32(int32_t(qh)),
                                             _mm256_setr_epi32(8, 7, 6, 5, 4, 3, 2, 1));
        const __m256i idx = or_masked(lo, hi, _mm256_set1_epi32(0x100));
        const __m256i mag =
            _mm256_i32gather_epi32(reinterpret_cast<const int *>(kIq3sGrid), idx, 4);
        // element j's sign: bit j of the chunk's 32 sign bits, -a where set (|a| <= 127)
        const __m256i av = load256(a + 32 * C);
        const __m256i signed_a =
            _mm256_mask_sub_epi8(av, __mmask32(bits), _mm256_setzero_si256(), av);
        return Isa::dot4_scaled(acc, mag, signed_a, chunk_scale(h.scales16, C));
    }
    template <int... C>
    static inline __m256i lanes(const uint8_t *p, const IQ3_SFields::Head &h, const uint8_t *a,
                                std::integer_sequence<int, C...>) {
        __m256i even = _mm256_setzero_si256(), odd = _mm256_setzero_si256();
        ((even = chunk_dot<2 * C>(even, p, h, a), odd = chunk_dot<2 * C + 1>(odd, p, h, a)), ...);
        return _mm256_add_epi32(even, odd);
    }
};

// IQ3_S's fields under another name, for this form's TokenLanes.
struct IQ3_SFieldsMaskSigns : IQ3_SFields {};
using IQ3_SMasked = SuperBlock<IQ3_SFieldsMaskSigns>;

template <>
struct TokenLanes<IQ3_SFieldsMaskSigns> {
    static constexpr bool kEnabled = true;
    template <class Act>
    static inline __m256i lanes(const uint8_t *p, const IQ3_SFields::Head &h, const Act &x) {
        return IQ3_SMaskSigns::lanes(p, h, q8k::qs(x.a), std::make_integer_sequence<int, 4>());
    }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
