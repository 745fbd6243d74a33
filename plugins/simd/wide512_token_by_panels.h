// The AVX-512 builds' token paths through the 16-row VNNI panels (common.h TokenByPanels), per
// format and vendor, as measured (docs/benchmarks.md, "IQ3_S's token step through the 16-row
// panels"):
//  - IQ3_S on AMD: its panels decode the grid with two-source word permutes (vpermt2w, one uop on
//    Zen 4 / 5) for 16 rows at once, where the token path's own form looks the grid up row by
//    row; on the Zen 5 VM 16-row panels ran the token call in half the time. On Intel Sapphire
//    Rapids vpermt2w is three uops and its gathers are fast: the panels ran 0.9x the token form
//    there, so Intel (and an unknown vendor) keeps it.
// Included by simd/wide512_q8_K_act.h after the panels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "simd/tuning.h"
#include "simd/wide512_panels_chunks.h"

namespace memra::simd::MEMRA_SIMD_NS {

template <class F>
struct TokenByPanels<F, std::enable_if_t<kOneOf<F, IQ3_S>>> {
    static constexpr bool kEnabled = true;
    static bool chosen() { return tuned_for(MEMRA_TUNING_AMD); }
    // Whole panels of the rows; the rest (fewer than 16) to the token path's own form.
    static int32_t gemv(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, float *y) {
        return PanelRowsPath<F>::gemm(w, row_bytes, rows, n, static_cast<const uint8_t *>(xq), 0, 1, y, 0,
                                      /*min_m=*/1);
    }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
