// Scalar number conversions and rounding primitives of the formats spec §2, by bit manipulation
// only: this header is compiled into the baseline x86-64 scalar plugin (no F16C, no SSE4.1
// rounding), and into the SIMD plugins for their block tails, so it must not depend on ISA
// extensions. Every function is exact and total (defined for every input bit pattern), and uses
// only integer operations and exact or singly-rounded f32 operations, so a copy inlined into a
// SIMD translation unit (other -m flags) computes the very same bits.
#pragma once

#include <cstdint>
#include <cstring>

namespace memra {

inline uint32_t f32_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

inline float f32_from_bits(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

// §2.1 fp16 -> f32: exact widening of normals, subnormals, ±0, ±inf; NaN stays NaN (payload kept).
inline float fp16_to_f32(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000) << 16;
    const uint32_t exp = (h >> 10) & 0x1F;
    uint32_t mant = h & 0x3FF;
    if (exp == 0x1F) return f32_from_bits(sign | 0x7F800000u | (mant << 13));  // inf / NaN
    if (exp != 0) return f32_from_bits(sign | ((exp + 112) << 23) | (mant << 13));  // 127-15 = 112
    if (mant == 0) return f32_from_bits(sign);                                       // ±0
    // Subnormal: value = mant * 2^-24. Normalise: shift the leading 1 up to bit 10.
    uint32_t e = 113;  // exponent the value would have with the leading 1 at bit 10
    while ((mant & 0x400) == 0) {
        mant <<= 1;
        --e;
    }
    return f32_from_bits(sign | (e << 23) | ((mant & 0x3FF) << 13));
}

// §2.2 f32 -> fp16: round to nearest, ties to even, subnormals handled, overflow to inf. NaN gives
// 0x7E00 | sign, as ggml's software routine (F16C would keep payload bits; no quantizer here can
// produce a NaN scale, see quantize.cpp).
inline uint16_t f32_to_fp16(float f) {
    const uint32_t x = f32_bits(f);
    const uint16_t sign = uint16_t((x >> 16) & 0x8000);
    const uint32_t a = x & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return uint16_t(sign | 0x7E00);  // NaN
    if (a >= 0x477FF000u) return uint16_t(sign | 0x7C00);  // >= 65520 (halfway past 65504): inf
    if (a >= 0x38800000u) {                                // >= 2^-14: a normal fp16
        const uint32_t r = a - 0x38000000u;                // rebias the exponent by 127-15
        // Round the 13 dropped bits to nearest even; a carry moves into the exponent correctly.
        return uint16_t(sign | ((r + 0x0FFFu + ((r >> 13) & 1)) >> 13));
    }
    if (a < 0x33000000u) return sign;  // < 2^-25 rounds to zero (2^-25 itself is handled below)
    // fp16 subnormal: result = round(f * 2^24), an integer 0..1024 (1024 = smallest normal).
    const uint32_t e = a >> 23;                    // 102..112
    const uint32_t m = (a & 0x7FFFFFu) | 0x800000u;  // value = m * 2^(e - 150)
    const uint32_t shift = 126 - e;                  // 14..24
    uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
    return uint16_t(sign | q);
}

// §2.3 bf16 <-> f32.
inline float bf16_to_f32(uint16_t b) { return f32_from_bits(uint32_t(b) << 16); }

inline uint16_t f32_to_bf16(float f) {
    const uint32_t u = f32_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return uint16_t((u >> 16) | 0x40);  // NaN: force quiet
    return uint16_t((u + 0x7FFFu + ((u >> 16) & 1)) >> 16);  // RNE; no flush; overflow -> inf
}

// §2.5 NVFP4 sub-block scale byte, decoded as ggml does: HALF the UE4M3 value (the 0.5 undoes the
// doubled E2M1 code book). Bit 7 is ignored; only 0x00 and 0x7F are zero; 0xFF = 240.
inline float ue4m3_half(uint8_t x) {
    if (x == 0x00 || x == 0x7F) return 0.0f;
    const uint32_t E = (x >> 3) & 0xF;
    const uint32_t M = x & 0x7;
    // Both branches are exact: a small integer times a power of two.
    if (E == 0) return float(M) * f32_from_bits((127u - 10u) << 23);  // M * 2^-9 * 0.5
    return float(8 + M) * f32_from_bits((127u + E - 11u) << 23);      // (1 + M/8) 2^(E-7) * 0.5
}

// §2.4 nearest_int of ggml's K-quant / Q8_K quantizers, reproduced operation for operation (add
// 1.5 * 2^23 in f32, read the mantissa) so that it equals ggml for every input: round to nearest,
// ties to even for |x| <= 4194303; beyond that (possible only for non-finite or absurd scales)
// it returns ggml's wrapped value.
inline int32_t nearest_int(float x) {
    const float val = x + 12582912.0f;
    const int32_t i = int32_t(f32_bits(val));
    return (i & 0x007FFFFF) - 0x00400000;
}

// Round to nearest, ties to even, with the result semantics of x86 cvtps2dq: NaN and values
// outside int32 give INT32_MIN ("integer indefinite"). This is what ggml's AVX2 Q8_0 quantizer
// computes with _mm256_round_ps + _mm256_cvtps_epi32, written without SSE4.1.
inline int32_t round_to_i32_rne(float x) {
    const float ax = x < 0 ? -x : x;
    if (!(ax < 2147483648.0f)) return INT32_MIN;  // NaN, inf, |x| >= 2^31
    if (ax >= 8388608.0f) return int32_t(x);      // >= 2^23: already an integer
    // ax + 2^23 lies in [2^23, 2^24) where the f32 ulp is 1, so the addition itself rounds ax to
    // an integer, to even on ties; subtracting 2^23 again is exact.
    const float r = (ax + 8388608.0f) - 8388608.0f;
    return x < 0 ? -int32_t(r) : int32_t(r);
}

}  // namespace memra
