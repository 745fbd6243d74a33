// The canonical order of every integer-dot format, version 2 (formats spec §5.3): per output and
// per scale block in K order, the block's exact int32 sum S, converted once and added with one
// fused multiply-add, acc = fmaf((float)S, D, acc); a format with mins then adds its exact min
// sum M the same way, acc = fmaf((float)M, N, acc), N = -(D_a * dmin). No lanes, no horizontal
// sum: the integer work may be associated any way (it is exact), so SIMD, VNNI and tile kernels
// reproduce these bits with lanes over OUTPUT rows, whatever the number of rows in the call.
#pragma once

#include <cmath>
#include <cstdint>

namespace memra::scalar {

// acc + (float)S * D, one rounding (the int32 -> f32 conversion rounds to nearest even; exact
// while |S| < 2^24).
inline float fma_block(float acc, int32_t S, float D) { return std::fma(float(S), D, acc); }

// The exact sum of w[i] * a[i] over n signed bytes.
inline int32_t int_dot(const int8_t *w, const int8_t *a, int n) {
    int32_t s = 0;
    for (int i = 0; i < n; ++i) s += int32_t(w[i]) * int32_t(a[i]);
    return s;
}

}  // namespace memra::scalar
