// The decoders of the format vocabulary: out[0..n) = the n values of one weight row (n a
// multiple of the format's block size), bit-identical to ggml's dequantizers (decode_*.cpp, from
// the accessors of block_fields.h). The scalar backend and every SIMD plugin serve them as their
// dequantize_row; the test kit decodes through them.
#pragma once

#include <cstdint>

#include "memra/qtypes.h"

namespace memra::blocks {

using DequantizeFn = void (*)(const uint8_t *row, int32_t n, float *out);

// dequantize_row_<name> for every format of MEMRA_FORMAT_LIST: decode_plain.cpp (F32, BF16,
// Q4_0, Q8_0, NVFP4), decode_kquants.cpp, decode_iquants.cpp.
#define MEMRA_DECODE_DECLARE_(name, NAME, id, elems, bytes, act) \
    void dequantize_row_##name(const uint8_t *row, int32_t n, float *out);
MEMRA_FORMAT_LIST(MEMRA_DECODE_DECLARE_)
#undef MEMRA_DECODE_DECLARE_

}  // namespace memra::blocks
