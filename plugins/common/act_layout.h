// Byte layouts of the quantized activation formats (formats spec §3), exactly ggml's:
//   Q8_0 block (32 values, 34 bytes):  fp16 d | int8 qs[32]
//   Q8_K block (256 values, 292 bytes): f32 d | int8 qs[256] | int16 bsums[16]
// BF16 and F32 activations are plain uint16 / float arrays.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/bytes.h"
#include "common/fp_convert.h"
#include "memra/qtypes.h"

namespace memra {

namespace q8_0_act {
constexpr int kBlockElems = memra_act_block_elems(MEMRA_ACT_Q8_0);
constexpr size_t kBlockBytes = size_t(memra_act_block_bytes(MEMRA_ACT_Q8_0));
static_assert(kBlockBytes == 2 + kBlockElems, "fp16 d | int8 qs[32]");
inline const uint8_t *block(const void *row, int b) {
    return static_cast<const uint8_t *>(row) + size_t(b) * kBlockBytes;
}
inline float d(const uint8_t *blk) { return fp16_to_f32(load_u16(blk)); }
inline const int8_t *qs(const uint8_t *blk) { return reinterpret_cast<const int8_t *>(blk + 2); }
}  // namespace q8_0_act

namespace q8_K_act {
constexpr int kBlockElems = memra_act_block_elems(MEMRA_ACT_Q8_K);
constexpr size_t kBlockBytes = size_t(memra_act_block_bytes(MEMRA_ACT_Q8_K));
constexpr size_t kQsOffset = 4;
constexpr size_t kBsumsOffset = kQsOffset + kBlockElems;
static_assert(kBlockBytes == kBsumsOffset + 2 * (kBlockElems / 16), "f32 d | int8 qs[256] | int16 bsums[16]");
inline const uint8_t *block(const void *row, int b) {
    return static_cast<const uint8_t *>(row) + size_t(b) * kBlockBytes;
}
inline float d(const uint8_t *blk) { return load_f32(blk); }
inline const int8_t *qs(const uint8_t *blk) {
    return reinterpret_cast<const int8_t *>(blk + kQsOffset);
}
// bsums[j] = sum of qs[16j .. 16j+15].
inline int32_t bsum(const uint8_t *blk, int j) { return load_i16(blk + kBsumsOffset + 2 * j); }
}  // namespace q8_K_act

}  // namespace memra
