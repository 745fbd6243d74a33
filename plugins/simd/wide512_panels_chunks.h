// The AVX-512 build's VNNI panels of 16 rows (simd/wide512_panel_driver.h) of Q2_K, Q3_K, IQ4_XS
// and IQ3_S: the panels of simd/panels_chunks.h on Vec512. Included by simd/wide512_q8_K_act.h;
// the AMX tiles (simd/tile_forms.h) load Q2_K's.
//
// Measured on Zen 5 for the per-row or raw-byte choice of each format's decoder:
//  - Q2_K's raw-byte decoder: per-row decodes + dense_b cost 3.4-3.7 token calls at m = 4
//    against the old path's 2.7.
//  - Q3_K's panels hold the unscaled u = q + 4 with Q6_K's sub-block multipliers, decoded from
//    raw bytes (Q3KSub16Panel, simd/panels_chunks.h): the scaled bytes (u - 4) * sc + 124 cost
//    about 2000 operations per 16-row block by the per-row decoder + dense_b (77% of gemm4), and
//    a raw-byte decoder of those scaled bytes was slower still (m = 4 / 8 / 32: 3.3-3.5 / 3.6-3.9
//    / 5.9-6.3 token calls against 3.0 / 3.2 / 5.4: the signed scaling costs 11 operations per
//    panel); unscaled, the decode is about 500 and the apply pays 16 vpmulld + 8 vpdpwssd more
//    per activation (past m = 8 two sub-blocks per vpdpwssd: their sums fit int16). In cache
//    (3 alternating rounds, median) gemm4 389 -> 214 us, gemm8 468 -> 305, gemm32 890 -> 780;
//    from DRAM m = 4 / 8 / 32 2.0-2.1 / 2.5 / 4.9 -> 1.3-1.5 / 1.8-1.9 / 4.6-4.7 token calls.
//    Its AMX tiles keep the per-row decode.
//  - IQ4_XS keeps a raw-byte decoder for the VNNI panels; its AMX tiles keep the per-row decode
//    (they hold v x sc in two digits; these panels hold v + 128 unscaled).
//  - IQ3_S's VNNI panels have their own 16-row decoder (simd/wide512_panels_iq3s.h: the per-row
//    gathers were half of gemm32); its AMX tiles keep the per-row decode.
#pragma once

#include <cstdint>
#include <type_traits>

#include "simd/panels_chunks.h"
#include "simd/rows16_layout.h"
#include "simd/wide512_panels_iq3s.h"  // Panel<IQ3_S>: its own 16-row decoder
#include "simd/wide512_panels_q8_K.h"

namespace memra::simd::MEMRA_SIMD_NS {

static_assert(kPanelRows == kRows16, "panels and B tiles share the 16-row layout");

template <>
struct Panel<Q2_K> : PanelOf<Q2_K, Vec512> {};
template <>
struct Panel<Q3_K> : Q3KSub16Panel<Vec512> {};
template <>
struct Panel<IQ4_XS> : PanelOf<IQ4_XS, Vec512> {};

template <class F>
struct RowsPath<F, std::enable_if_t<kOneOf<F, Q2_K, Q3_K, IQ4_XS, IQ3_S>>> : SuperBlockPanelRows<F> {};

}  // namespace memra::simd::MEMRA_SIMD_NS
