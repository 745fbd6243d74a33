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
// for the rows path (plugins/backends.table) without losing the small calls. A tile C holds 16
// activations, so a call of 17-31 rows pays for 32 on the tiles and the panels win there; below
// 16 the tiles do part of their work on padding.
//
// Each least m is read from the Intel host from DRAM (docs/amx.md, "Measured on the Intel host"):
// rows calls in units of token calls of the same expert (the token path is the same code under
// both plugins, so this compares amx and avx512bf16, each alternated with its own token calls),
// two processes of each, alternated, at 1, 4 and 16 threads (2026-12-06), and the m = 4..32 table
// of the night before for the smaller m; amx's speed over avx512bf16's at 1 / 4 / 16 threads (the
// noise floor, panels against panels in the same runs, is 0.89-1.10):
//  - Q2_K: 1.07-1.16 at m = 8, 1.13-1.27 at 32, 1.18-1.25 at 64.
//  - Q4_0, Q8_0, MXFP4, IQ4_XS: 0.74-0.95 at m = 24 (a 24-row call pays for 32 on the tiles),
//    0.95-1.15 at 32, 1.06-1.26 at 64. Q3_K, Q6_K: 1.07-1.35 at 32, 1.19-1.57 at 64; at 16 the
//    night's table had each behind at one thread count (0.94).
//  - IQ3_S: 0.91-1.04 at m = 32, 0.94-1.12 at 48, 1.00-1.21 at 64: from 48.
//  - Q4_K, Q5_K: 0.75-0.82 at m = 24, 0.80-0.93 at 32, 0.95-1.09 at 64: the panels serve every
//    call (MEMRA_TILES_NEVER); the tiles stay built and tested (the emulated build runs them at
//    every m) for a host where they win.
#define MEMRA_TILES_NEVER 65  // above the contract's 64 rows
#define MEMRA_TILE_FORMAT_LIST(X)                    \
    X(q4_0, Block32Tiles<Q4_0>, 32)                  \
    X(q8_0, Block32Tiles<Q8_0>, 32)                  \
    X(mxfp4, Block32Tiles<MXFP4>, 32)                \
    X(q2_K, Q2_KTiles, 8)                            \
    X(q3_K, Q3_KPanelTiles, 32)                      \
    X(q4_K, Q4_KTiles, MEMRA_TILES_NEVER)            \
    X(q5_K, Q5_KTiles, MEMRA_TILES_NEVER)            \
    X(q6_K, Q6_KTiles, 32)                           \
    X(iq3_s, IQ3_SPanelTiles, 48)                    \
    X(iq4_xs, IQ4_XSPanelTiles, 32)

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
