// Where each field of each weight block lives: one small accessor per field, named and indexed
// as in the formats spec §4, so that the decoders (common/decode.h), the scalar dot products and
// whatever else reads weight blocks read the same bits the same way and each read like the
// spec's formula. Element indices are within one block. Part of the format vocabulary (with
// tables.h, act_layout.h, decode.h and quantize.h) shared by the plugins, the test kit and tools.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/bytes.h"
#include "common/fp_convert.h"
#include "common/tables.h"
#include "memra/qtypes.h"

namespace memra::blocks {

namespace f32 {  // §4.1: one little-endian binary32 per value
constexpr int kElems = 1;
constexpr size_t kBytes = 4;
}  // namespace f32

namespace bf16 {  // §4.1: one bfloat16 (the top half of a binary32) per value
constexpr int kElems = 1;
constexpr size_t kBytes = 2;
}  // namespace bf16

namespace q4_0 {  // §4.2: fp16 d | qs[16], byte j = element j (lo) and j+16 (hi)
constexpr int kElems = 32;
constexpr size_t kBytes = 18;
inline float d(const uint8_t *b) { return fp16_to_f32(load_u16(b)); }
inline int code(const uint8_t *b, int i) { return i < 16 ? lo4(b[2 + i]) : hi4(b[2 + i - 16]); }
inline int quant(const uint8_t *b, int i) { return code(b, i) - 8; }
}  // namespace q4_0

namespace q8_0 {  // §4.3: fp16 d | int8 qs[32]
constexpr int kElems = 32;
constexpr size_t kBytes = 34;
inline float d(const uint8_t *b) { return fp16_to_f32(load_u16(b)); }
inline int quant(const uint8_t *b, int i) { return int8_t(b[2 + i]); }
}  // namespace q8_0

namespace q2_K {  // §4.4: scales[16] | qs[64] | fp16 d | fp16 dmin
constexpr int kElems = 256;
constexpr size_t kBytes = 84;
inline float d(const uint8_t *b) { return fp16_to_f32(load_u16(b + 80)); }
inline float dmin(const uint8_t *b) { return fp16_to_f32(load_u16(b + 82)); }
inline int scale(const uint8_t *b, int s) { return lo4(b[s]); }  // sub-block s of 16
inline int min(const uint8_t *b, int s) { return hi4(b[s]); }
inline int quant(const uint8_t *b, int i) {  // 0..3
    const int h = i / 128, g = (i % 128) / 32, l = i % 32;
    return (b[16 + 32 * h + l] >> (2 * g)) & 3;
}
}  // namespace q2_K

namespace q3_K {  // §4.5: hmask[32] | qs[64] | scales[12] | fp16 d
constexpr int kElems = 256;
constexpr size_t kBytes = 110;
inline float d(const uint8_t *b) { return fp16_to_f32(load_u16(b + 108)); }
inline int scale(const uint8_t *b, int j) {  // sub-block j of 16: signed 6-bit, -32..31
    const uint8_t *S = b + 96;
    const int low = j < 8 ? lo4(S[j]) : hi4(S[j - 8]);
    const int high = (S[8 + j % 4] >> (2 * (j / 4))) & 3;
    return (low | high << 4) - 32;
}
inline int quant(const uint8_t *b, int i) {  // -4..3; a SET hmask bit means "no offset"
    const int h = i / 128, g = (i % 128) / 32, l = i % 32;
    const int low = (b[32 + 32 * h + l] >> (2 * g)) & 3;
    const int hb = (b[l] >> (4 * h + g)) & 1;
    return low - (hb ? 0 : 4);
}
}  // namespace q3_K

// §4.6 get_scale_min_k4: the 12-byte packing of eight 6-bit scales and mins (Q4_K and Q5_K).
inline int k4_scale(const uint8_t *S, int j) {
    return j < 4 ? (S[j] & 63) : (lo4(S[j + 4]) | ((S[j - 4] >> 6) << 4));
}
inline int k4_min(const uint8_t *S, int j) {
    return j < 4 ? (S[j + 4] & 63) : (hi4(S[j + 4]) | ((S[j] >> 6) << 4));
}
// The Q4_K / Q5_K low nibbles: chunk c = i/64 of 32 bytes, low nibble for the first 32 elements.
inline int k4_low4(const uint8_t *qs, int i) {
    const uint8_t byte = qs[32 * (i / 64) + i % 32];
    return (i % 64) < 32 ? lo4(byte) : hi4(byte);
}

namespace q4_K {  // §4.6: fp16 d | fp16 dmin | scales[12] | qs[128]
constexpr int kElems = 256;
constexpr size_t kBytes = 144;
inline float d(const uint8_t *b) { return fp16_to_f32(load_u16(b)); }
inline float dmin(const uint8_t *b) { return fp16_to_f32(load_u16(b + 2)); }
inline int scale(const uint8_t *b, int j) { return k4_scale(b + 4, j); }  // sub-block j of 32
inline int min(const uint8_t *b, int j) { return k4_min(b + 4, j); }
inline int quant(const uint8_t *b, int i) { return k4_low4(b + 16, i); }  // 0..15
}  // namespace q4_K

namespace q5_K {  // §4.7: fp16 d | fp16 dmin | scales[12] | qh[32] | qs[128]
constexpr int kElems = 256;
constexpr size_t kBytes = 176;
inline float d(const uint8_t *b) { return fp16_to_f32(load_u16(b)); }
inline float dmin(const uint8_t *b) { return fp16_to_f32(load_u16(b + 2)); }
inline int scale(const uint8_t *b, int j) { return k4_scale(b + 4, j); }
inline int min(const uint8_t *b, int j) { return k4_min(b + 4, j); }
inline int quant(const uint8_t *b, int i) {  // 0..31
    return k4_low4(b + 48, i) + 16 * ((b[16 + i % 32] >> (i / 32)) & 1);
}
}  // namespace q5_K

namespace q6_K {  // §4.8: ql[128] | qh[64] | int8 scales[16] | fp16 d
constexpr int kElems = 256;
constexpr size_t kBytes = 210;
inline float d(const uint8_t *b) { return fp16_to_f32(load_u16(b + 208)); }
inline int scale(const uint8_t *b, int s) { return int8_t(b[192 + s]); }  // sub-block s of 16
inline int quant(const uint8_t *b, int i) {  // -32..31
    const int h = i / 128, g = (i % 128) / 32, l = i % 32;
    const uint8_t lbyte = b[64 * h + 32 * (g % 2) + l];
    const int low = g < 2 ? lo4(lbyte) : hi4(lbyte);
    const int high = (b[128 + 32 * h + l] >> (2 * g)) & 3;
    return (low | high << 4) - 32;
}
}  // namespace q6_K

namespace iq3_s {  // §4.10: fp16 d | qs[64] | qh[8] | signs[32] | scales[4]
constexpr int kElems = 256;
constexpr size_t kBytes = 110;
inline float d(const uint8_t *b) { return fp16_to_f32(load_u16(b)); }
inline int scale(const uint8_t *b, int sb) {  // sub-block sb of 32: ls = 1 + 2*s4, odd 1..31
    const int s4 = (b[106 + sb / 2] >> (4 * (sb % 2))) & 0xF;
    return 1 + 2 * s4;
}
inline int magnitude(const uint8_t *b, int i) {  // odd 1..15
    const int sb = i / 32, g = i / 4, k = g % 8, t = i % 4;
    const int idx = b[2 + g] | (((b[66 + sb] >> k) & 1) << 8);
    return (kIq3sGrid[idx] >> (8 * t)) & 0xFF;
}
inline bool negative(const uint8_t *b, int i) { return (b[74 + i / 8] >> (i % 8)) & 1; }
}  // namespace iq3_s

namespace iq4_xs {  // §4.12: fp16 d | u16 scales_h | scales_l[4] | qs[128]
constexpr int kElems = 256;
constexpr size_t kBytes = 136;
inline float d(const uint8_t *b) { return fp16_to_f32(load_u16(b)); }
inline int scale(const uint8_t *b, int sb) {  // sub-block sb of 32: ls - 32, -32..31
    const int low = (b[4 + sb / 2] >> (4 * (sb % 2))) & 0xF;
    const int high = (load_u16(b + 2) >> (2 * sb)) & 3;
    return (low | high << 4) - 32;
}
inline int value(const uint8_t *b, int i) {  // the code book value K[code_i]
    const int sb = i / 32, r = i % 32;
    const uint8_t byte = b[8 + 16 * sb + r % 16];
    return kValuesIq4nl[r < 16 ? lo4(byte) : hi4(byte)];
}
}  // namespace iq4_xs

namespace mxfp4 {  // §4.14: E8M0 e | qs[16], byte j = element j (lo) and j+16 (hi)
constexpr int kElems = 32;
constexpr size_t kBytes = 17;
// §2.6: ggml decodes e to HALF of 2^(e-127), i.e. 2^(e-128) (the 0.5 undoes the doubled E2M1
// code book): bits (e-1) << 23 for e >= 2, the subnormals 2^-127 and 2^-128 for e = 1 and 0;
// e = 255 is 2^127, not NaN.
inline float e8m0_half(uint8_t e) { return f32_from_bits(e >= 2 ? uint32_t(e - 1) << 23 : 0x00200000u << e); }
inline float scale(const uint8_t *b) { return e8m0_half(b[0]); }
inline int value(const uint8_t *b, int i) {  // kvalues_fp4[code_i] (doubled E2M1)
    return kValuesFp4[i < 16 ? lo4(b[1 + i]) : hi4(b[1 + i - 16])];
}
}  // namespace mxfp4

namespace nvfp4 {  // §4.13: UE4M3 d[4] | qs[32]; per 16-sub-block byte t = element t (lo), t+8 (hi)
constexpr int kElems = 64;
constexpr size_t kBytes = 36;
inline float scale(const uint8_t *b, int s) { return ue4m3_half(b[s]); }  // sub-block s of 16
inline int value(const uint8_t *b, int i) {  // kvalues_fp4[code_i] (doubled E2M1)
    const int s = i / 16, r = i % 16;
    const uint8_t byte = b[4 + 8 * s + r % 8];
    return kValuesFp4[r < 8 ? lo4(byte) : hi4(byte)];
}
}  // namespace nvfp4

// Each namespace above against its MEMRA_FORMAT_LIST row (memra/qtypes.h): a new row without
// accessors here, or accessors for another block size, does not compile.
#define MEMRA_BLOCK_FIELDS_CHECK_(name, NAME, id, elems, bytes, act)                   \
    static_assert(name::kElems == elems && name::kBytes == size_t(bytes),               \
                  "common/block_fields.h: " #name " disagrees with its MEMRA_FORMAT_LIST row");
MEMRA_FORMAT_LIST(MEMRA_BLOCK_FIELDS_CHECK_)
#undef MEMRA_BLOCK_FIELDS_CHECK_

}  // namespace memra::blocks
