// The kernel entry points of one ISA build (namespace MEMRA_SIMD_NS), defined in kernels_*.cpp
// from the format templates and collected into the table by backend_table.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "isa_select.h"

namespace memra::simd::MEMRA_SIMD_NS {

#define MEMRA_SIMD_DECLARE(name)                                                                  \
    void gemv_##name(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, \
                     float *y);                                                                   \
    void gemm_##name(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, \
                     size_t xq_stride, int32_t m, float *y, size_t ldy);

MEMRA_SIMD_DECLARE(f32)
MEMRA_SIMD_DECLARE(bf16)
MEMRA_SIMD_DECLARE(q8_0)
MEMRA_SIMD_DECLARE(q4_0)
MEMRA_SIMD_DECLARE(nvfp4)
MEMRA_SIMD_DECLARE(q2_K)
MEMRA_SIMD_DECLARE(q3_K)
MEMRA_SIMD_DECLARE(q4_K)
MEMRA_SIMD_DECLARE(q5_K)
MEMRA_SIMD_DECLARE(q6_K)
MEMRA_SIMD_DECLARE(iq3_s)
MEMRA_SIMD_DECLARE(iq4_xs)

#undef MEMRA_SIMD_DECLARE

}  // namespace memra::simd::MEMRA_SIMD_NS

#define MEMRA_SIMD_DEFINE(name, Format)                                                           \
    void gemv_##name(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, \
                     float *y) {                                                                  \
        gemv<Format>(w, row_bytes, rows, n, xq, y);                                               \
    }                                                                                             \
    void gemm_##name(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, \
                     size_t xq_stride, int32_t m, float *y, size_t ldy) {                         \
        gemm<Format>(w, row_bytes, rows, n, xq, xq_stride, m, y, ldy);                            \
    }
