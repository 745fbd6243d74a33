// The formats the tile builds (plugins/amx, plugins/amx_emulated) serve, each with its tile form
// (simd/tile_gemm.h): every format whose dot is integer and whose weights come as one unsigned
// byte per element (Block32: Q8_0, Q4_0, MXFP4) or as chunks with int scales (SuperBlock: the
// K-quants, IQ4_XS, IQ3_S). Left out, to the plugins below: F32 and BF16 (float dots), and NVFP4
// (four 16-element sub-blocks per block, each its own scale: a tile form needs one C tile per
// half of the block; possible, not yet written).
#pragma once

#include "simd/tile_gemm.h"

// X(name, tile form)
#define MEMRA_TILE_FORMAT_LIST(X)          \
    X(q4_0, Block32Tiles<Q4_0>)            \
    X(q8_0, Block32Tiles<Q8_0>)            \
    X(mxfp4, Block32Tiles<MXFP4>)          \
    X(q2_K, SuperBlockTiles<Q2_K>)         \
    X(q3_K, SuperBlockTiles<Q3_K>)         \
    X(q4_K, SuperBlockTiles<Q4_K>)         \
    X(q5_K, SuperBlockTiles<Q5_K>)         \
    X(q6_K, SuperBlockTiles<Q6_K>)         \
    X(iq3_s, SuperBlockTiles<IQ3_S>)       \
    X(iq4_xs, SuperBlockTiles<IQ4_XS>)

namespace memra::simd::MEMRA_SIMD_NS {

#define MEMRA_TILE_DECLARE_(name, Form)                                                                 \
    void gemm_tiles_##name(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, \
                           size_t xq_stride, int32_t m, float *y, size_t ldy);
MEMRA_TILE_FORMAT_LIST(MEMRA_TILE_DECLARE_)
#undef MEMRA_TILE_DECLARE_

}  // namespace memra::simd::MEMRA_SIMD_NS
