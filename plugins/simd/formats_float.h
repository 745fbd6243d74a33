// F32 and BF16 with F32 / BF16 activations, in the orders of scalar/dot_float.cpp.
//
// F32: 64 lanes, lane k accumulating the elements i with i % 64 == k in ascending i, one fma
// each, folded by halves and hsum8 at the end. One vfmadd per W consecutive elements (W = 8 or 16
// lanes) into accumulator (i / W) % (64 / W) is exactly that; a tail (n % 64) is done lane by
// lane. Each row's 8 accumulators are independent chains, so one row at a time keeps the fma
// units busy; the rows path shares each weight load between activations.
//
// BF16: vdpbf16ps's pair order (32 lanes of element pairs, odd element first, DAZ/FTZ), which is
// ggml's on AVX512_BF16 CPUs. Where the build has AVX512_BF16 the instruction itself does the
// work; elsewhere each 32-bit word of bf16 pairs becomes two f32 vectors with no shuffle (odd =
// the word with its low half cleared, even = the word shifted left by 16) and two vfmadds, under
// MXCSR's DAZ and FTZ so that they round and flush as the instruction does.
#pragma once

#include <cmath>

#include "simd/common.h"

namespace memra::simd::MEMRA_SIMD_NS {

// The accumulator vectors: 8 lanes (8 accumulators per dot) or 16 (4 per dot); accumulator v
// of width W holds the canonical lanes W v .. W v + W - 1 either way.
struct Vec256 {
    static constexpr int kWidth = 8;
    using type = __m256;
    static inline type zero() { return _mm256_setzero_ps(); }
    static inline type fma(type a, type b, type c) { return _mm256_fmadd_ps(a, b, c); }
    static inline void store(float *p, type v) { _mm256_storeu_ps(p, v); }
    static inline type load(const float *p) { return _mm256_loadu_ps(p); }
    static inline type f32(const uint8_t *p) { return _mm256_loadu_ps(reinterpret_cast<const float *>(p)); }
    // BF16 pairs (formats_bf16.h): one word per lane; its odd and even element as f32, with no
    // shuffle (odd = the word with its low half cleared, even = the word shifted left by 16).
    using words = __m256i;
    static inline words load_words(const uint8_t *p) { return load256(p); }
    static inline type odd(words w) { return _mm256_castsi256_ps(_mm256_and_si256(w, _mm256_set1_epi32(int(0xFFFF0000u)))); }
    static inline type even(words w) { return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)); }
#ifdef __AVX512BF16__
    static inline type dp(type a, words w, words x) { return _mm256_dpbf16_ps(a, (__m256bh)w, (__m256bh)x); }
#endif
};
#ifdef __AVX512F__
struct Vec512 {
    static constexpr int kWidth = 16;
    using type = __m512;
    static inline type zero() { return _mm512_setzero_ps(); }
    static inline type fma(type a, type b, type c) { return _mm512_fmadd_ps(a, b, c); }
    static inline void store(float *p, type v) { _mm512_storeu_ps(p, v); }
    static inline type load(const float *p) { return _mm512_loadu_ps(p); }
    static inline type f32(const uint8_t *p) { return _mm512_loadu_ps(reinterpret_cast<const float *>(p)); }
    using words = __m512i;
    static inline words load_words(const uint8_t *p) { return _mm512_loadu_si512(p); }
    static inline type odd(words w) { return _mm512_castsi512_ps(_mm512_and_si512(w, _mm512_set1_epi32(int(0xFFFF0000u)))); }
    static inline type even(words w) { return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16)); }
#ifdef __AVX512BF16__
    static inline type dp(type a, words w, words x) { return _mm512_dpbf16_ps(a, (__m512bh)w, (__m512bh)x); }
#endif
};
#endif

// Each type's vectors (gemv, rows path) and its rows-path tile (rows x activations sharing
// loads), sized to the registers: AVX2 builds have 16, so one dot of 8 accumulators at a time;
// AVX-512 builds have 32, so 2 rows x 2 activations of 4 accumulators. F32's gemv reads 256-bit
// vectors unless its rows start on cache lines: GGUF data is 32-byte aligned and 64-byte loads of
// it split cache lines (in-cache gemv 22 GB/s with them against 41 with 256-bit loads on a Zen 5);
// on lines it reads 64-byte vectors with no software prefetch, as ggml's vec_dot_f32 does
// (float_gemv). On the rows path each load serves 4 dots, which pays for the splits (gemm32 1.9 ->
// 2.5 GB/s against 1 row x 2 activations of 256-bit accumulators).
struct F32 {
    using V = Vec256;  // gemv of rows off cache lines
#ifdef __AVX512F__
    using VRows = Vec512;  // gemm: each load serves 2 x 2 dots, which pays for the line splits
    static constexpr int kRows = 2, kActs = 2;
#else
    using VRows = Vec256;
    static constexpr int kRows = 1, kActs = 1;
#endif
    static constexpr size_t kElemBytes = 4;
    template <class W>
    static inline typename W::type load(const uint8_t *p) { return W::f32(p); }
    static inline float load1(const uint8_t *p) { return f32(p); }
};

constexpr int kCanonicalLanes = 64;

// Software prefetch along each weight row, into L2, 4 KiB ahead like the 32-element formats'
// token path (simd/common.h): on the Intel device host one row at a time without it read 20-30%
// slower than the 8-row tiles before (BF16, 1 thread: 10.4 GB/s before, 7.5-8.1 without, 10.8
// with 4 KiB, 8.4 with 1 KiB).
constexpr size_t kFloatPrefetchBytes = 4096;

// The 64 lanes of one dot folded by halves (lane k += lane k + 32, + 16, + 8) and hsum8.
template <class V>
inline float fold_lanes(const typename V::type *a) {
    alignas(64) float lanes[kCanonicalLanes];
    for (int v = 0; v < kCanonicalLanes / V::kWidth; ++v) V::store(lanes + V::kWidth * v, a[v]);
    __m256 g[8];
    for (int k = 0; k < 8; ++k) g[k] = _mm256_load_ps(lanes + 8 * k);
    for (int width = 4; width >= 1; width /= 2)
        for (int k = 0; k < width; ++k) g[k] = _mm256_add_ps(g[k], g[k + width]);
    return hsum8(g[0]);
}

// R rows x J activations: R*J independent dots, each in kAccs accumulators, each weight and
// activation load shared; each weight row prefetched `Ahead` bytes ahead (0: not at all).
template <class T, class V, int R, int J, size_t Ahead = kFloatPrefetchBytes>
inline void float_tile(const uint8_t *w, size_t row_bytes, int32_t n, const uint8_t *x, size_t xq_stride, float *y,
                       size_t ldy) {
    constexpr int kAccs = kCanonicalLanes / V::kWidth;
    typename V::type acc[J][R][kAccs];
    for (int j = 0; j < J; ++j)
        for (int r = 0; r < R; ++r)
            for (int v = 0; v < kAccs; ++v) acc[j][r][v] = V::zero();
    const int32_t n64 = n - n % kCanonicalLanes;
    for (int32_t i = 0; i < n64; i += kCanonicalLanes)
        for (int v = 0; v < kAccs; ++v) {
            const size_t at = size_t(i + V::kWidth * v) * T::kElemBytes;
            typename V::type xv[J];
            for (int j = 0; j < J; ++j) xv[j] = T::template load<V>(x + size_t(j) * xq_stride + at);
            for (int r = 0; r < R; ++r) {
                const uint8_t *wr = w + size_t(r) * row_bytes + at;
                if (Ahead && (size_t(V::kWidth) * size_t(v) * T::kElemBytes) % 64 == 0)  // once per cache line
                    _mm_prefetch(reinterpret_cast<const char *>(wr + Ahead), _MM_HINT_T1);
                const typename V::type wv = T::template load<V>(wr);
                for (int j = 0; j < J; ++j) acc[j][r][v] = V::fma(wv, xv[j], acc[j][r][v]);
            }
        }
    for (int j = 0; j < J; ++j)
        for (int r = 0; r < R; ++r) {
            typename V::type *a = acc[j][r];
            if (n64 != n) {  // the tail lane by lane: element i into lane i % 64
                alignas(64) float lanes[kCanonicalLanes];
                for (int v = 0; v < kAccs; ++v) V::store(lanes + V::kWidth * v, a[v]);
                for (int32_t i = n64; i < n; ++i)
                    lanes[i % kCanonicalLanes] = _mm_cvtss_f32(_mm_fmadd_ss(
                        _mm_set_ss(T::load1(w + size_t(r) * row_bytes + size_t(i) * T::kElemBytes)),
                        _mm_set_ss(T::load1(x + size_t(j) * xq_stride + size_t(i) * T::kElemBytes)),
                        _mm_set_ss(lanes[i % kCanonicalLanes])));
                for (int v = 0; v < kAccs; ++v) a[v] = V::load(lanes + V::kWidth * v);
            }
            y[size_t(j) * ldy + size_t(r)] = fold_lanes<V>(a);
        }
}

// Whether every row of a gemv starts on a cache line, so that 64-byte loads never split one
// (the F32 and BF16 token paths read 64-byte vectors then).
inline bool gemv_on_lines(const uint8_t *w, size_t row_bytes) {
    return ((reinterpret_cast<uintptr_t>(w) | row_bytes) & 63u) == 0;
}

// One row at a time: its accumulators are independent fma chains, and the weights arrive as one
// sequential stream (see the token path in simd/common.h). Rows on cache lines (AVX-512 builds):
// 64-byte loads and no software prefetch, the loop of ggml's vec_dot_f32 (zen4 build); on the Zen
// 5 VM, memra-bench --peer ggml, token, 1 thread, alternating runs, memra/ggml 0.90-0.93 with
// 256-bit loads and the 4 KiB prefetch, 0.82-0.95 with 64-byte loads and the prefetch, 0.92-0.97
// with 2 rows at a time, 0.99-1.08 with one row and no prefetch (docs/benchmarks.md, "F32 token
// path"). Accumulator v of either width holds the same canonical lanes: the bits do not change.
template <class T>
void float_gemv(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, float *y) {
    const uint8_t *x = static_cast<const uint8_t *>(xq);
#ifdef __AVX512F__
    if (gemv_on_lines(w, row_bytes)) {
        for (int32_t r = 0; r < rows; ++r)
            float_tile<T, Vec512, 1, 1, /*Ahead=*/0>(w + size_t(r) * row_bytes, row_bytes, n, x, 0, y + r, 1);
        return;
    }
#endif
    for (int32_t r = 0; r < rows; ++r) float_tile<T, typename T::V, 1, 1>(w + size_t(r) * row_bytes, row_bytes, n, x, 0, y + r, 1);
}

template <class T, int R>
inline void float_rows_all_acts(const uint8_t *w, size_t row_bytes, int32_t n, const uint8_t *x, size_t xq_stride,
                                int32_t m, float *y, size_t ldy) {
    constexpr int J = T::kActs;
    int32_t j = 0;
    for (; j + J <= m; j += J)
        float_tile<T, typename T::VRows, R, J>(w, row_bytes, n, x + size_t(j) * xq_stride, xq_stride, y + size_t(j) * ldy, ldy);
    for (; j < m; ++j) float_tile<T, typename T::VRows, R, 1>(w, row_bytes, n, x + size_t(j) * xq_stride, xq_stride, y + size_t(j) * ldy, ldy);
}

template <class T>
void float_gemm(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, size_t xq_stride,
                int32_t m, float *y, size_t ldy) {
    const uint8_t *x = static_cast<const uint8_t *>(xq);
    constexpr int R = T::kRows;
    int32_t r = 0;
    for (; r + R <= rows; r += R)
        float_rows_all_acts<T, R>(w + size_t(r) * row_bytes, row_bytes, n, x, xq_stride, m, y + r, ldy);
    for (; r < rows; ++r) float_rows_all_acts<T, 1>(w + size_t(r) * row_bytes, row_bytes, n, x, xq_stride, m, y + r, ldy);
}

}  // namespace memra::simd::MEMRA_SIMD_NS
