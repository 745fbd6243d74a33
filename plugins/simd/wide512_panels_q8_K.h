// The AVX-512 build's VNNI panels of 16 rows (simd/wide512_panel_driver.h) of Q4_K, Q5_K and Q6_K
// (the panels of simd/panels_q8_K_act.h on Vec512), and the rows path of every super-block
// format with panels: panels of 16 rows first, the 4-row tiles of simd/common.h for the rest.
// Included by simd/wide512_q8_K_act.h.
#pragma once

#include <cstdint>
#include <type_traits>

#include "simd/panels_q8_K_act.h"
#include "simd/wide512_panel_driver.h"

namespace memra::simd::MEMRA_SIMD_NS {

template <>
struct Panel<Q4_K> : PanelOf<Q4_K, Vec512> {};
template <>
struct Panel<Q5_K> : PanelOf<Q5_K, Vec512> {};
template <>
struct Panel<Q6_K> : PanelOf<Q6_K, Vec512> {};

// The rows path of a super-block format with panels: panels of 16 rows, then the 4-row tiles (and
// single rows) of simd/common.h.
template <class F>
struct SuperBlockPanelRows {
    static constexpr bool kEnabled = true;
    static inline void gemm(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const uint8_t *x,
                            size_t xq_stride, int32_t m, float *y, size_t ldy) {
        gemm_tail<F>(w, row_bytes, PanelRowsPath<F>::gemm(w, row_bytes, rows, n, x, xq_stride, m, y, ldy), rows, n, x,
                     xq_stride, m, y, ldy);
    }
};
template <class F>
struct RowsPath<F, std::enable_if_t<kOneOf<F, Q4_K, Q5_K, Q6_K>>> : SuperBlockPanelRows<F> {};

}  // namespace memra::simd::MEMRA_SIMD_NS
