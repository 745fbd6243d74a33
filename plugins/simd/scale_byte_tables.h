// The one-byte block scales of NVFP4 (UE4M3) and MXFP4 (E8M0) decoded as ggml does, as constant
// tables of all 256 bytes, so that a decode is one load instead of a branchy conversion (for
// MXFP4's E8M0: a compare, two shifts and a select per block and row, which made the 32-element
// formats' cheapest blocks twice as dear on the token path). Every entry is a small integer times
// a power of two, computed exactly at compile time; plugins/tests checks all 256 bytes of each
// against the scalar conversions (fp_convert.h ue4m3_half, block_fields.h e8m0_half). No
// intrinsics here: the tests include it without ISA flags.
#pragma once

#include <cstdint>

namespace memra::simd {

// v * 2^shift, exactly (v a small integer or a power of two; the result may be subnormal).
constexpr float times_pow2(float v, int shift) {
    for (int i = 0; i < shift; ++i) v *= 2.0f;
    for (int i = 0; i > shift; --i) v *= 0.5f;
    return v;
}

// NVFP4: HALF the UE4M3 value; bit 7 ignored except that only 0x00 and 0x7F are zero, so 0xFF is 240.
constexpr float ue4m3_half_exact(uint32_t x) {
    if (x == 0x00 || x == 0x7F) return 0.0f;
    const uint32_t E = (x >> 3) & 0xF, M = x & 0x7;
    // E == 0: M * 2^-9 * 0.5 = M * 2^-10; else (8 + M) * 2^(E - 11).
    return E == 0 ? times_pow2(float(M), -10) : times_pow2(float(8 + M), int(E) - 11);
}

// MXFP4: HALF of 2^(e - 127), i.e. 2^(e - 128): subnormal for e = 0 and 1, 2^127 for 0xFF (no NaN).
constexpr float e8m0_half_exact(uint32_t e) { return times_pow2(1.0f, int(e) - 128); }

struct ScaleByteTable {
    float v[256];
};

template <class Decode>
constexpr ScaleByteTable make_scale_byte_table(Decode decode) {
    ScaleByteTable t{};
    for (uint32_t x = 0; x < 256; ++x) t.v[x] = decode(x);
    return t;
}

// Constant data only (no function of this header runs at run time), so the tables can be shared
// by every ISA build and the tests without an inline function compiled under several -m flags.
inline constexpr ScaleByteTable kUe4m3Half = make_scale_byte_table(ue4m3_half_exact);
inline constexpr ScaleByteTable kE8m0Half = make_scale_byte_table(e8m0_half_exact);

}  // namespace memra::simd
