// The formats the tile builds (plugins/amx, plugins/amx_emulated) serve, each with its tile form
// (simd/tile_forms.h, driven by simd/tile_gemm.h): every format whose dot is integer and whose
// weights come as one byte per element (Block32: Q8_0, Q4_0, MXFP4) or as chunks with int scales
// (SuperBlock: the K-quants, IQ4_XS, IQ3_S). Left out, to the plugins below: F32 and BF16 (float
// dots), and NVFP4 (four 16-element sub-blocks per block, each its own scale: a tile form needs
// K = 16 per C tile or four C tiles per block; possible, not yet written).
#pragma once

#include "simd/tile_gemm.h"
#include "simd/tile_panel_forms.h"

// X(name, tile form, least m): the AMX build runs the tiles from `least m` activations up and
// hands smaller calls to the VNNI panels (simd/kernels_tiles.cpp), so that auto can prefer amx
// for the rows path (plugins/backends.table) without losing the small calls. Each least m is
// read from one run on the Intel host from DRAM (amx over avx512bf16 at m = 4, 8, 16, 32 and 1,
// 4, 16 threads; docs/amx.md, "Measured on the Intel host (2026-12-05, night)"): the first of
// those m from which amx was about even or ahead at all three thread counts, and 24 where the
// m = 16 cells straddled 1. Q4_K is kept at 24 on its in-cache gain, though that run had it
// behind at m = 32 at 1 and 4 threads. A tile C holds 16 activations: below 16 the tiles do part
// of their work on padding.
#define MEMRA_TILE_FORMAT_LIST(X)          \
    X(q4_0, Block32Tiles<Q4_0>, 24)        \
    X(q8_0, Block32Tiles<Q8_0>, 24)        \
    X(mxfp4, Block32Tiles<MXFP4>, 16)      \
    X(q2_K, Q2_KTiles, 8)                  \
    X(q3_K, Q3_KPanelTiles, 16)            \
    X(q4_K, Q4_KTiles, 24)                 \
    X(q5_K, Q5_KTiles, 24)                 \
    X(q6_K, Q6_KTiles, 16)                 \
    X(iq3_s, IQ3_SPanelTiles, 24)          \
    X(iq4_xs, IQ4_XSPanelTiles, 16)

namespace memra::simd::MEMRA_SIMD_NS {

// The forms with arguments beyond the format (no commas inside the list's macro arguments).
using Q2_KTiles = Q2_KPanelTiles;  // one digit, from the VNNI panels' decode
// Q4_K .. IQ4_XS: B from the VNNI panels' 16-row decode, the scales multiplied on the panels
// (simd/tile_panel_forms.h).
using Q4_KTiles = Q4_KPanelTiles;
using Q5_KTiles = Q5_KPanelTiles;
using Q6_KTiles = Q6_KPanelTiles;

#define MEMRA_TILE_DECLARE_(name, Form, least_m)                                                        \
    void gemm_tiles_##name(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, \
                           size_t xq_stride, int32_t m, float *y, size_t ldy);
MEMRA_TILE_FORMAT_LIST(MEMRA_TILE_DECLARE_)
#undef MEMRA_TILE_DECLARE_

}  // namespace memra::simd::MEMRA_SIMD_NS
