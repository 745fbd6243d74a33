// NVFP4's UE4M3 sub-block scale bytes decoded as ggml does (fp_convert.h ue4m3_half: HALF the
// UE4M3 value; bit 7 ignored except that only 0x00 and 0x7F are zero, so 0xFF is 240), as a
// constant table of all 256 bytes, so that a decode is one load instead of a branchy conversion. Every entry is a small integer
// times a power of two, computed exactly at compile time; plugins/tests checks all 256 bytes
// against ue4m3_half. No intrinsics here: the tests include it without ISA flags.
#pragma once

#include <cstdint>

namespace memra::simd {

constexpr float ue4m3_half_exact(uint32_t x) {
    if (x == 0x00 || x == 0x7F) return 0.0f;
    const uint32_t E = (x >> 3) & 0xF, M = x & 0x7;
    // E == 0: M * 2^-9 * 0.5 = M * 2^-10; else (8 + M) * 2^(E - 11).
    float v = E == 0 ? float(M) : float(8 + M);
    const int shift = E == 0 ? -10 : int(E) - 11;
    for (int i = 0; i < shift; ++i) v *= 2.0f;
    for (int i = 0; i > shift; --i) v *= 0.5f;
    return v;
}

struct Ue4m3Table {
    float v[256];
};

constexpr Ue4m3Table make_ue4m3_table() {
    Ue4m3Table t{};
    for (uint32_t x = 0; x < 256; ++x) t.v[x] = ue4m3_half_exact(x);
    return t;
}

// Constant data only (no function of this header runs at run time), so the table can be shared
// by every ISA build and the tests without an inline function compiled under several -m flags.
inline constexpr Ue4m3Table kUe4m3Half = make_ue4m3_table();

}  // namespace memra::simd
