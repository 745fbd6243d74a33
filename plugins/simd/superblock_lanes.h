// The int lanes of one 256-element super-block on 256-bit registers, shared by every ISA layer:
// sum over the 8 chunks c of 32 of dot4_scaled(q[c], a[32c..], sc[c]); the signed form uses
// |q| (aq) against sign(q) * a. `Isa` supplies dot4_scaled (the only ISA-specific step).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace memra::simd::MEMRA_SIMD_NS {

template <class Isa>
inline __m256i superblock_scaled_lanes(const __m256i q[8], const __m256i sc[8], const int8_t *a) {
    __m256i sumi = _mm256_setzero_si256();
    for (int c = 0; c < 8; ++c)
        sumi = Isa::dot4_scaled(sumi, q[c], _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a + 32 * c)), sc[c]);
    return sumi;
}

template <class Isa>
inline __m256i superblock_signed_scaled_lanes(const __m256i q[8], const __m256i aq[8], const __m256i sc[8],
                                              const int8_t *a) {
    __m256i sumi = _mm256_setzero_si256();
    for (int c = 0; c < 8; ++c)
        sumi = Isa::dot4_scaled(sumi, aq[c],
                                _mm256_sign_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(a + 32 * c)), q[c]),
                                sc[c]);
    return sumi;
}

}  // namespace memra::simd::MEMRA_SIMD_NS
