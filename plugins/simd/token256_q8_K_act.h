// The 256-bit builds' (avx2, avxvnni, avxvnni_emulated) own token-path forms of super-block
// formats paired with Q8_K activations (TokenLanes, simd/formats_q8_K_act.h; TokenAct,
// simd/common.h), included by simd/formats_q8_K_act.h where the ISA selection does not define
// MEMRA_SIMD_WIDE512. They sum the same exact int lanes in another grouping: the same S, the
// same bits as every other build.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "simd/formats_q8_K_act.h"

namespace memra::simd::MEMRA_SIMD_NS {

// IQ4_XS dots two chunks from one 32-byte load in their stored order: bytes 8 + 32 P.. hold
// chunks 2P | 2P + 1 (16 bytes each), their low nibbles are elements 0-15 of both chunks, their
// high nibbles elements 16-31. So one vpsrlw serves two chunks (two vpsrlvq before) and both
// halves take one multiplier vector [sc(2P) | sc(2P + 1)] (scales16_of16 of the 8 scale bytes:
// one vpshufb where there were two). The activations come in the same order, prepared once per
// call for every row (ActKLoHi: 16-byte lanes 0, 2 | 1, 3 of each 64 bytes). In cache on the Zen 5
// VM (memra-bench-micro gemv, best of 6 alternating runs, 2026-12-05) v2 / v1 went from 0.97 to
// 1.03 (avx2) and 0.94 to 1.02 (avxvnni); docs/benchmarks.md "Token path under v2".
struct ActKLoHi : ActK {
    alignas(32) int8_t lohi[256];
};
inline ActKLoHi act_k_lohi(const uint8_t *a) {
    ActKLoHi x;
    static_cast<ActK &>(x) = act_k(a);
    for (int P = 0; P < 4; ++P) {
        const __m256i A = load256(q8k::qs(a) + 64 * P), B = load256(q8k::qs(a) + 64 * P + 32);
        _mm256_store_si256(reinterpret_cast<__m256i *>(x.lohi + 64 * P), _mm256_permute2x128_si256(A, B, 0x20));
        _mm256_store_si256(reinterpret_cast<__m256i *>(x.lohi + 64 * P + 32), _mm256_permute2x128_si256(A, B, 0x31));
    }
    return x;
}
template <>
struct TokenAct<IQ4_XS> {
    using type = ActKLoHi;
    static inline ActKLoHi make(const uint8_t *a) { return act_k_lohi(a); }
};

template <>
struct TokenLanes<IQ4_XSFields> {
    static constexpr bool kEnabled = true;
    static inline SChunk half(__m256i idx, __m256i sc) {
        const __m256i v = _mm256_shuffle_epi8(broadcast128(load128(kValuesIq4nl)), idx);
        return {v, _mm256_abs_epi8(v), sc};
    }
    static inline __m256i lanes(const uint8_t *p, const IQ4_XSFields::Head &, const ActKLoHi &x) {
        const __m256i scales = scales16_of16(IQ4_XSFields::scale_bytes(p)), m4 = _mm256_set1_epi8(0x0F);
        __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
        for (int P = 0; P < 4; ++P) {
            const __m256i q = load256(p + 8 + 32 * P), sc = chunk_scale(scales, P);
            lo = chunk_dot<Isa>(lo, half(_mm256_and_si256(q, m4), sc), load256(x.lohi + 64 * P));
            hi = chunk_dot<Isa>(hi, half(move_bits<4, 0>(q, m4), sc), load256(x.lohi + 64 * P + 32));
        }
        return _mm256_add_epi32(lo, hi);
    }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
