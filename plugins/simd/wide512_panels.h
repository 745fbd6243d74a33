// The AVX-512 build's VNNI panels of 16 rows (simd/wide512_panel_driver.h) of the formats paired
// with Q8_0 activations: Q8_0, Q4_0, MXFP4 and NVFP4, the panels of simd/panels_q8_0_act.h on
// Vec512. Included by simd/wide512_q8_0_act.h, whose PairsRowsPath::gemm takes the rows in panels
// first, and by the AMX tiles (simd/tile_forms.h), which load the same panels.
#pragma once

#include "simd/panels_q8_0_act.h"
#include "simd/wide512_panel_driver.h"

namespace memra::simd::MEMRA_SIMD_NS {

template <>
struct Panel<Q8_0> : PanelOf<Q8_0, Vec512> {};
template <>
struct Panel<Q4_0> : PanelOf<Q4_0, Vec512> {};
template <>
struct Panel<MXFP4> : PanelOf<MXFP4, Vec512> {};
template <>
struct Panel<NVFP4> : PanelOf<NVFP4, Vec512> {};

}  // namespace memra::simd::MEMRA_SIMD_NS
