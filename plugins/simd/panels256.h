// The 256-bit builds' rows path (avxvnni, avx2, avxvnni_emulated) on panels of 8 output rows
// (issue 26 item 3: lanes over outputs) of the formats paired with Q8_0 activations: the panels
// of simd/panels_q8_0_act.h on ymm (Vec256, simd/panels256_driver.h): a 32-byte panel row holds
// 8 rows' 4 bytes, the dot4 is the ISA layer's. The super-block formats' are in
// simd/panels256_q8_K.h. Included by simd/formats_q8_0_act.h where the ISA selection does not
// define MEMRA_SIMD_WIDE512; rows a panel does not cover (rows % 8, or a call the panels do not
// take) go to the tiles of simd/common.h.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <type_traits>

#include "simd/panels256_driver.h"
#include "simd/panels_q8_0_act.h"

namespace memra::simd::MEMRA_SIMD_NS {

// Which formats take the 8-row panels in this build (plugins/simd/README.md has the
// measurements): all four; AVX2's Q8_0 on sign-trick panels (w + 128 would saturate vpmaddubsw).
template <class F>
inline constexpr bool kPanels256 = kOneOf<F, Q8_0, Q4_0, MXFP4, NVFP4>;

template <class F>
struct RowsPath<F, std::enable_if_t<kPanels256<F>>> : Panels256RowsPath<F> {};

}  // namespace memra::simd::MEMRA_SIMD_NS
