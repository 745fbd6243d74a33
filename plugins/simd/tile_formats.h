// The formats the tile builds (plugins/amx, plugins/amx_emulated) serve, each with its tile form
// (simd/tile_forms.h, driven by simd/tile_gemm.h): every format whose dot is integer and whose
// weights come as one byte per element (Block32: Q8_0, Q4_0, MXFP4) or as chunks with int scales
// (SuperBlock: the K-quants, IQ4_XS, IQ3_S). Left out, to the plugins below: F32 and BF16 (float
// dots), and NVFP4 (four 16-element sub-blocks per block, each its own scale: a tile form needs
// K = 16 per C tile or four C tiles per block; possible, not yet written).
#pragma once

#include "simd/tile_gemm.h"

// X(name, tile form)
#define MEMRA_TILE_FORMAT_LIST(X)          \
    X(q4_0, Block32Tiles<Q4_0>)            \
    X(q8_0, Block32Tiles<Q8_0>)            \
    X(mxfp4, Block32Tiles<MXFP4>)          \
    X(q2_K, Q2_KTiles)                     \
    X(q3_K, SuperBlockTiles<Q3_K>)         \
    X(q4_K, Q4_KTiles)                     \
    X(q5_K, Q5_KTiles)                     \
    X(q6_K, Q6_KTiles)                     \
    X(iq3_s, SuperBlockTiles<IQ3_S>)       \
    X(iq4_xs, SuperBlockTiles<IQ4_XS>)

namespace memra::simd::MEMRA_SIMD_NS {

// The forms with arguments beyond the format (no commas inside the list's macro arguments).
using Q2_KTiles = Q2_KPanelTiles;  // one digit, from the VNNI panels' decode
using Q4_KTiles = SuperBlockTiles<Q4_K, 0, K4Mins>;
using Q5_KTiles = SuperBlockTiles<Q5_K, 0, K4Mins>;
using Q6_KTiles = SuperBlockTiles<Q6_K, 32>;  // q + 32 from the decoder, signed in B

#define MEMRA_TILE_DECLARE_(name, Form)                                                                 \
    void gemm_tiles_##name(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, \
                           size_t xq_stride, int32_t m, float *y, size_t ldy);
MEMRA_TILE_FORMAT_LIST(MEMRA_TILE_DECLARE_)
#undef MEMRA_TILE_DECLARE_

}  // namespace memra::simd::MEMRA_SIMD_NS
