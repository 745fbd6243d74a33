// The rows-path entry points of a tile build (plugins/amx, plugins/amx_emulated): one per row of
// MEMRA_TILE_FORMAT_LIST, the tile driver over that format's tile form from its least m up (every
// m in the emulated build), the VNNI panels' rows path (simd/common.h gemm) below it.
#include "simd/tile_formats.h"

namespace memra::simd::MEMRA_SIMD_NS {

#define MEMRA_TILE_DEFINE_(name, Form, least_m)                                                         \
    static_assert(Form::Format::kElems == memra::formats::name.block_elems &&                             \
                      Form::Format::kBytes == size_t(memra::formats::name.block_bytes),                   \
                  #Form "'s block disagrees with its MEMRA_FORMAT_LIST row");                             \
    void gemm_tiles_##name(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq,   \
                           size_t xq_stride, int32_t m, float *y, size_t ldy) {                           \
        if (!Tiles::kEveryM && m < (least_m))                                                             \
            return gemm<Form::Format>(w, row_bytes, rows, n, xq, xq_stride, m, y, ldy);                   \
        tile_gemm<Form>(w, row_bytes, rows, n, xq, xq_stride, m, y, ldy);                                 \
    }
MEMRA_TILE_FORMAT_LIST(MEMRA_TILE_DEFINE_)
#undef MEMRA_TILE_DEFINE_

}  // namespace memra::simd::MEMRA_SIMD_NS
