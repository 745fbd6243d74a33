// memra_kernel_v2::gemv / gemm for the scalar backend, built from one dot product per format.
// The scalar gemm simply loops over the activations: each result is then the gemv result by
// construction (bit for bit, as backend.h requires).
#pragma once

#include <cstddef>
#include <cstdint>

#include "scalar/kernels.h"

namespace memra::scalar {

template <DotFn Dot>
void gemv(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, float *y) {
    for (int32_t r = 0; r < rows; ++r) y[r] = Dot(w + size_t(r) * row_bytes, xq, n);
}

template <DotFn Dot>
void gemm(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq,
          size_t xq_stride, int32_t m, float *y, size_t ldy) {
    for (int32_t j = 0; j < m; ++j)
        gemv<Dot>(w, row_bytes, rows, n, static_cast<const uint8_t *>(xq) + size_t(j) * xq_stride,
                  y + size_t(j) * ldy);
}

}  // namespace memra::scalar
