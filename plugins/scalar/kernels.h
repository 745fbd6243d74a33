// The scalar reference kernels: one dot product per weight format, with the shared decoders of
// common/decode.h. These are the definition the SIMD plugins are tested against: decoders
// bit-identical to ggml's dequantizers, integer dots in the canonical order v2 of block_order.h
// (formats spec §5.3); F32 and BF16 in the lane orders of dot_float.cpp.
#pragma once

#include <cstdint>

#include "common/decode.h"
#include "memra/qtypes.h"

namespace memra::scalar {

using blocks::DequantizeFn;

// dot(row w, activation xq) over n values; xq is in the format's activation layout.
using DotFn = float (*)(const uint8_t *w, const void *xq, int32_t n);

// dot_<name> for every format of MEMRA_FORMAT_LIST; xq is in the format's act_format layout.
// Defined in dot_*.cpp.
#define MEMRA_SCALAR_DECLARE_(name, NAME, id, elems, bytes, act) float dot_##name(const uint8_t *w, const void *xq, int32_t n);
MEMRA_FORMAT_LIST(MEMRA_SCALAR_DECLARE_)
#undef MEMRA_SCALAR_DECLARE_

}  // namespace memra::scalar
