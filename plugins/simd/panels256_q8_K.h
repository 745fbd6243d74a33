// The 256-bit builds' rows path (avxvnni, avx2, avxvnni_emulated) of the super-block formats on
// panels of 8 output rows: the panels of simd/panels_q8_K_act.h and simd/panels_chunks.h on ymm
// (Vec256, simd/panels256_driver.h), then the 4-row tiles of simd/common.h for the rows a panel
// does not cover. Included by simd/formats_q8_K_act.h where the ISA selection does not define
// MEMRA_SIMD_WIDE512.
#pragma once

#include <type_traits>

#include "simd/panels256_driver.h"
#include "simd/panels_chunks.h"
#include "simd/panels_q8_K_act.h"

namespace memra::simd::MEMRA_SIMD_NS {

// Whether super-block format F takes the 8-row panels in this build (plugins/simd/README.md has
// the measurements): one of the formats listed, where the build's dot4 takes its panel bytes
// exactly (dot4_fits: on AVX2 not Q3_K, which keeps its tiles).
template <class F>
constexpr bool super_block_panels256() {
    if constexpr (kOneOf<F, Q4_K, Q5_K, Q6_K, Q2_K, Q3_K, IQ4_XS, IQ3_S>) return dot4_fits(PanelOf<F, Vec256>::kMaxU);
    else return false;
}

// Q2_K takes the panels from 4 activations on: below, its 8-row panels' decode cost more than the
// tiles' (memra-bench from DRAM, token calls, the Zen 5 VM, avxvnni tiles / panels: m = 2
// 2.0-2.3 / 2.7, m = 3 2.6-2.7 / 3.0-3.1; avx2 m = 2 2.4-2.5 / 2.2-2.4). Since the panels
// prefetch the next tile (simd/panel_driver.h) they win from m = 4 (avxvnni 3.2-3.4 -> 2.8-3.2,
// avx2 4.0-4.3 -> 3.2-3.4) and Q6_K's from m = 2 (avxvnni m = 2 / 3 / 4: 3.1-3.2 / 3.3-3.4 /
// 3.6-4.0 -> 1.8-2.1 / 1.9 / 2.2-2.4; avx2 alike); before, both took them from m = 8.
template <class F>
constexpr int32_t panels256_min_m() {
    return std::is_same_v<F, Q2_K> ? 4 : kPanelMinM;
}

template <class F>
struct RowsPath<F, std::enable_if_t<super_block_panels256<F>()>> : Panels256RowsPath<F, panels256_min_m<F>()> {};

}  // namespace memra::simd::MEMRA_SIMD_NS
