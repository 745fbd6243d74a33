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

template <class F>
struct RowsPath<F, std::enable_if_t<super_block_panels256<F>()>> : Panels256RowsPath<F> {};

}  // namespace memra::simd::MEMRA_SIMD_NS
