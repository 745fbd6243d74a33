// F32 and BF16 with F32 / BF16 activations, in the order of scalar/dot_float.cpp: lane k
// accumulates the elements i with i % 8 == k in ascending i, one fma each; hsum8 at the end. One
// vfmadd per 8 consecutive elements is exactly that; a tail (n % 8) is done lane by lane. The
// single accumulator chain per dot is the definition, so parallelism comes from rows: 4 rows
// share each activation load. There is nothing to decode (BF16: a shift), so the rows path runs
// the 4-row kernel per activation over a row tile that stays in cache.
#pragma once

#include <cmath>

#include "simd/common.h"

namespace memra::simd::MEMRA_SIMD_NS {

struct F32 {
    static constexpr size_t kElemBytes = 4;
    static inline __m256 load8(const uint8_t *p) { return _mm256_loadu_ps(reinterpret_cast<const float *>(p)); }
    static inline float load1(const uint8_t *p) { return f32(p); }
};

struct BF16 {
    static constexpr size_t kElemBytes = 2;
    static inline __m256 load8(const uint8_t *p) {
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(load128(p)), 16));
    }
    static inline float load1(const uint8_t *p) {
        uint16_t h;
        std::memcpy(&h, p, 2);
        uint32_t u = uint32_t(h) << 16;
        float f;
        std::memcpy(&f, &u, 4);
        return f;
    }
};

template <class T, int R>
inline void float_rows(const uint8_t *w, size_t row_bytes, int32_t n, const uint8_t *x, float *y) {
    __m256 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
    const int32_t n8 = n - n % 8;
    for (int32_t i = 0; i < n8; i += 8) {
        const __m256 xv = T::load8(x + size_t(i) * T::kElemBytes);
        for (int r = 0; r < R; ++r)
            acc[r] = _mm256_fmadd_ps(T::load8(w + size_t(r) * row_bytes + size_t(i) * T::kElemBytes), xv, acc[r]);
    }
    for (int r = 0; r < R; ++r) {
        if (n8 != n) {
            alignas(32) float lanes[8];
            _mm256_store_ps(lanes, acc[r]);
            for (int32_t i = n8; i < n; ++i)
                lanes[i % 8] = _mm_cvtss_f32(_mm_fmadd_ss(
                    _mm_set_ss(T::load1(w + size_t(r) * row_bytes + size_t(i) * T::kElemBytes)),
                    _mm_set_ss(T::load1(x + size_t(i) * T::kElemBytes)), _mm_set_ss(lanes[i % 8])));
            acc[r] = _mm256_load_ps(lanes);
        }
        y[r] = hsum8(acc[r]);
    }
}

template <class T>
void float_gemv(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, float *y) {
    const uint8_t *x = static_cast<const uint8_t *>(xq);
    int32_t r = 0;
    for (; r + 4 <= rows; r += 4) float_rows<T, 4>(w + size_t(r) * row_bytes, row_bytes, n, x, y + r);
    for (; r < rows; ++r) float_rows<T, 1>(w + size_t(r) * row_bytes, row_bytes, n, x, y + r);
}

template <class T>
void float_gemm(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, size_t xq_stride,
                int32_t m, float *y, size_t ldy) {
    const uint8_t *x = static_cast<const uint8_t *>(xq);
    int32_t r = 0;
    for (; r + 4 <= rows; r += 4)
        for (int32_t j = 0; j < m; ++j)
            float_rows<T, 4>(w + size_t(r) * row_bytes, row_bytes, n, x + size_t(j) * xq_stride, y + size_t(j) * ldy + r);
    for (; r < rows; ++r)
        for (int32_t j = 0; j < m; ++j)
            float_rows<T, 1>(w + size_t(r) * row_bytes, row_bytes, n, x + size_t(j) * xq_stride, y + size_t(j) * ldy + r);
}

}  // namespace memra::simd::MEMRA_SIMD_NS
