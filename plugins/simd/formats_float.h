// F32 and BF16 with F32 / BF16 activations, in the order of scalar/dot_float.cpp: lane k
// accumulates the elements i with i % 8 == k in ascending i, one fma each; hsum8 at the end. One
// vfmadd per 8 consecutive elements is exactly that; a tail (n % 8) is done lane by lane. The
// single accumulator chain per dot is the definition, so parallelism comes from independent
// dots: gemv runs 8 rows at once, the rows path 4 rows x 2 activations (each weight vector
// loaded once for both; there is nothing else to decode, BF16 being a shift).
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

// R rows x J activations: R*J independent fma chains (one per dot), each weight and each
// activation load shared.
template <class T, int R, int J>
inline void float_tile(const uint8_t *w, size_t row_bytes, int32_t n, const uint8_t *x, size_t xq_stride, float *y,
                       size_t ldy) {
    __m256 acc[J][R];
    for (int j = 0; j < J; ++j)
        for (int r = 0; r < R; ++r) acc[j][r] = _mm256_setzero_ps();
    const int32_t n8 = n - n % 8;
    for (int32_t i = 0; i < n8; i += 8) {
        __m256 xv[J];
        for (int j = 0; j < J; ++j) xv[j] = T::load8(x + size_t(j) * xq_stride + size_t(i) * T::kElemBytes);
        for (int r = 0; r < R; ++r) {
            const __m256 wv = T::load8(w + size_t(r) * row_bytes + size_t(i) * T::kElemBytes);
            for (int j = 0; j < J; ++j) acc[j][r] = _mm256_fmadd_ps(wv, xv[j], acc[j][r]);
        }
    }
    for (int j = 0; j < J; ++j)
        for (int r = 0; r < R; ++r) {
            if (n8 != n) {
                alignas(32) float lanes[8];
                _mm256_store_ps(lanes, acc[j][r]);
                for (int32_t i = n8; i < n; ++i)
                    lanes[i % 8] = _mm_cvtss_f32(_mm_fmadd_ss(
                        _mm_set_ss(T::load1(w + size_t(r) * row_bytes + size_t(i) * T::kElemBytes)),
                        _mm_set_ss(T::load1(x + size_t(j) * xq_stride + size_t(i) * T::kElemBytes)),
                        _mm_set_ss(lanes[i % 8])));
                acc[j][r] = _mm256_load_ps(lanes);
            }
            y[size_t(j) * ldy + size_t(r)] = hsum8(acc[j][r]);
        }
}

template <class T>
void float_gemv(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, float *y) {
    const uint8_t *x = static_cast<const uint8_t *>(xq);
    int32_t r = 0;
    for (; r + 8 <= rows; r += 8) float_tile<T, 8, 1>(w + size_t(r) * row_bytes, row_bytes, n, x, 0, y + r, 1);
    for (; r < rows; ++r) float_tile<T, 1, 1>(w + size_t(r) * row_bytes, row_bytes, n, x, 0, y + r, 1);
}

template <class T, int R>
inline void float_rows_all_acts(const uint8_t *w, size_t row_bytes, int32_t n, const uint8_t *x, size_t xq_stride,
                                int32_t m, float *y, size_t ldy) {
    int32_t j = 0;
    for (; j + 2 <= m; j += 2)
        float_tile<T, R, 2>(w, row_bytes, n, x + size_t(j) * xq_stride, xq_stride, y + size_t(j) * ldy, ldy);
    for (; j < m; ++j) float_tile<T, R, 1>(w, row_bytes, n, x + size_t(j) * xq_stride, xq_stride, y + size_t(j) * ldy, ldy);
}

template <class T>
void float_gemm(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, size_t xq_stride,
                int32_t m, float *y, size_t ldy) {
    const uint8_t *x = static_cast<const uint8_t *>(xq);
    int32_t r = 0;
    for (; r + 4 <= rows; r += 4)
        float_rows_all_acts<T, 4>(w + size_t(r) * row_bytes, row_bytes, n, x, xq_stride, m, y + r, ldy);
    for (; r < rows; ++r) float_rows_all_acts<T, 1>(w + size_t(r) * row_bytes, row_bytes, n, x, xq_stride, m, y + r, ldy);
}

}  // namespace memra::simd::MEMRA_SIMD_NS
