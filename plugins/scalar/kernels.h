// The scalar reference kernels, one decoder and one dot product per weight format. These are
// the definition the SIMD plugins are tested against: decoders bit-identical to ggml's
// dequantizers, dots in the canonical accumulation order of lanes.h (ggml's AVX2 order).
#pragma once

#include <cstdint>

#include "memra/qtypes.h"

namespace memra::scalar {

// out[0..n) = the n values of one row (n a multiple of the format's block size).
using DequantizeFn = void (*)(const uint8_t *row, int32_t n, float *out);

// dot(row w, activation xq) over n values; xq is in the format's activation layout.
using DotFn = float (*)(const uint8_t *w, const void *xq, int32_t n);

// dequantize_row_<name> and dot_<name> for every format of MEMRA_FORMAT_LIST; xq is in the
// format's act_format layout. Defined in decode_*.cpp and dot_*.cpp.
#define MEMRA_SCALAR_DECLARE_(name, NAME, id, elems, bytes, act) \
    void dequantize_row_##name(const uint8_t *row, int32_t n, float *out);  \
    float dot_##name(const uint8_t *w, const void *xq, int32_t n);
MEMRA_FORMAT_LIST(MEMRA_SCALAR_DECLARE_)
#undef MEMRA_SCALAR_DECLARE_

}  // namespace memra::scalar
