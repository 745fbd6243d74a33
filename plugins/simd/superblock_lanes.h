// The int lanes of 32-element chunks on 256-bit registers, shared by every ISA layer: one chunk
// (the token path, decoded in registers) or a stored super-block of 8 (the rows path): sum over
// the chunks c of dot4_scaled(q[c], a[32c..], sc[c]); the signed form uses |q| (aq) against
// sign(q) * a. `Isa` supplies dot4_scaled (the only ISA-specific step).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace memra::simd::MEMRA_SIMD_NS {

// One decoded 32-element chunk with its int16 multipliers (Isa::dot4_scaled): unsigned quants q,
// or signed ones as `sign` (any bytes whose sign is the value's) and magnitudes `mag`.
struct UChunk {
    __m256i q, sc;
};
struct SChunk {
    __m256i sign, mag, sc;
};

// acc + the chunk's scaled int lanes against the 32 activation bytes a.
template <class Isa>
inline __m256i chunk_dot(__m256i acc, const UChunk &k, __m256i a) {
    return Isa::dot4_scaled(acc, k.q, a, k.sc);
}
template <class Isa>
inline __m256i chunk_dot(__m256i acc, const SChunk &k, __m256i a) {
    return Isa::dot4_scaled(acc, k.mag, _mm256_sign_epi8(a, k.sign), k.sc);
}

// Signed quants q stored as u = q + K (unsigned): the offset comes off the int16 pair sums,
// koff = K (a[2i] + a[2i+1]) of the same 32 activations, prepared once per activation block
// for all rows. maddubs(u, a) - koff = maddubs(q, a) exactly (formats keep |u a pairs| in int16).
template <int K>
struct OChunk {
    __m256i u, sc;
};
template <class Isa, int K>
inline __m256i chunk_dot(__m256i acc, const OChunk<K> &k, __m256i a, __m256i koff) {
    return Isa::dot2_scaled(acc, _mm256_sub_epi16(_mm256_maddubs_epi16(k.u, a), koff), k.sc);
}

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
