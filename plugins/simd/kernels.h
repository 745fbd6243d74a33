// The kernel entry points of one ISA build (namespace MEMRA_SIMD_NS), defined in kernels_*.cpp
// from the format templates and collected into the table by backend_table.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "isa_select.h"
#include "memra/qtypes.h"

namespace memra::simd::MEMRA_SIMD_NS {

#define MEMRA_SIMD_DECLARE(name)                                                                  \
    void gemv_##name(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, \
                     float *y);                                                                   \
    void gemm_##name(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, \
                     size_t xq_stride, int32_t m, float *y, size_t ldy);

// Every format of MEMRA_FORMAT_LIST.
#define MEMRA_SIMD_DECLARE_ROW_(name, NAME, id, elems, bytes, act) MEMRA_SIMD_DECLARE(name)
MEMRA_FORMAT_LIST(MEMRA_SIMD_DECLARE_ROW_)
#undef MEMRA_SIMD_DECLARE_ROW_

#undef MEMRA_SIMD_DECLARE

}  // namespace memra::simd::MEMRA_SIMD_NS

#define MEMRA_SIMD_DEFINE(name, Format)                                                           \
    static_assert(Format::kElems == memra::formats::name.block_elems &&                           \
                      Format::kBytes == size_t(memra::formats::name.block_bytes),                \
                  #Format "'s block disagrees with its MEMRA_FORMAT_LIST row");                   \
    void gemv_##name(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, \
                     float *y) {                                                                  \
        gemv<Format>(w, row_bytes, rows, n, xq, y);                                               \
    }                                                                                             \
    void gemm_##name(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, \
                     size_t xq_stride, int32_t m, float *y, size_t ldy) {                         \
        gemm<Format>(w, row_bytes, rows, n, xq, xq_stride, m, y, ldy);                            \
    }

// MEMRA_SIMD_DEFINE for the formats of MEMRA_FORMAT_LIST whose act_format is the one a
// kernels_<act>.cpp serves: that file defines MEMRA_SIMD_ON_MEMRA_ACT_<each act>(name, NAME) as
// MEMRA_SIMD_DEFINE(name, NAME) for its own and as nothing for the others, then expands
// MEMRA_FORMAT_LIST(MEMRA_SIMD_DEFINE_ROW_).
#define MEMRA_SIMD_DEFINE_ROW_(name, NAME, id, elems, bytes, act) MEMRA_SIMD_ON_##act(name, NAME)
