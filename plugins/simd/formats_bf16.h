// BF16 weights with BF16 activations, in the pair order of scalar/dot_float.cpp (vdpbf16ps's,
// and ggml's on AVX512_BF16 CPUs): 32 lanes, lane L taking the element pairs (2p, 2p + 1) with
// p % 32 == L; per pair fma(odd) then fma(even), subnormal inputs read as zero and subnormal
// results flushed (DAZ/FTZ); lanes 0-15 and 16-31 reduced by halves into r1, r2; the elements
// past the last whole 64 added in double, as ggml's tail.
//
// One 32-bit word holds a pair. A vector of W words covers 2W elements, so a dot keeps 32 / W
// accumulators, accumulator v holding lanes W v .. W v + W - 1, whatever the width: the same
// canonical lanes on every build. A step is one of
//   PairFma<V>: the word split into two f32 vectors and two vfmadds, run under MXCSR DAZ|FTZ (so
//               that they round and flush as vdpbf16ps does; the instruction ignores MXCSR);
//   PairDp<V>:  vdpbf16ps, where the build has AVX512_BF16.
// The token path reads 64-byte vectors where the build has them and the rows start on cache
// lines, else 32-byte ones (GGUF data is 32-byte aligned: 64-byte loads of it would split cache
// lines, see formats_float.h); the rows path the widest the build has.
#pragma once

#include <algorithm>

#include "common/bytes.h"
#include "common/fp_convert.h"
#include "simd/formats_float.h"
#include "simd/tuning.h"

namespace memra::simd::MEMRA_SIMD_NS {

constexpr int kBf16PairLanes = 32;
constexpr int32_t kBf16Chunk = 2 * kBf16PairLanes;  // elements per round over the lanes

// MXCSR with DAZ (bit 6) and FTZ (bit 15) and round-to-nearest (bits 13-14 clear, as vdpbf16ps
// always rounds) for the lifetime of the object (On), or untouched.
template <bool On>
class DazFtzScope {
public:
    DazFtzScope() : saved_(_mm_getcsr()) { _mm_setcsr((saved_ & ~0x6000u) | 0x8040u); }
    ~DazFtzScope() { _mm_setcsr(saved_); }
    DazFtzScope(const DazFtzScope &) = delete;
    DazFtzScope &operator=(const DazFtzScope &) = delete;

private:
    unsigned saved_;
};
template <>
class DazFtzScope<false> {};

// The two ways of doing one pair step of W lanes.
// V: Vec256 or Vec512 of formats_float.h, whose `words` are W pairs.
template <class V>
struct PairFma : V {
    static constexpr int kWords = V::kWidth;
    static constexpr bool kNeedsDazFtz = true;
    using acc = typename V::type;
    static inline acc step(acc a, typename V::words w, typename V::words x) {
        a = V::fma(V::odd(w), V::odd(x), a);
        return V::fma(V::even(w), V::even(x), a);
    }
};

#ifdef __AVX512BF16__
template <class V>
struct PairDp : V {
    static constexpr int kWords = V::kWidth;
    static constexpr bool kNeedsDazFtz = false;
    using acc = typename V::type;
    static inline acc step(acc a, typename V::words w, typename V::words x) { return V::dp(a, w, x); }
};
#endif

// The steps of this build (token path, rows path), the token path's rows per pass and the rows
// path's tile: R rows x J activations share each load; 32 / W accumulators per dot must fit the
// registers with the loads (and, for PairFma, the split halves). Measured in cache on a Zen 5
// (memra-bench-micro, 1536 x 4096): vdpbf16ps gemm 4 x 3 12.1-12.6 k rows/s against 9.1-10.3 k
// with 2 x 4 (the F32-style order before: 7.6-8.2 k); gemv of 4 rows 54-58 GB/s (before: 47).
//
// The token path: GemvWide on rows that start on cache lines (gemv_on_lines), else Gemv. With
// vdpbf16ps it streams ONE row at a time, like ggml's vec_dot: from memory, on a Zen 5 with the
// other core busy, 4 rows at a time read 8 GB/s where one row read 11-13 (32-byte loads) and 15
// (64-byte loads on lines); its 4 (or 2) accumulators are enough chains for the instruction.
// The two-fma step keeps several rows: each lane's two fmas depend on each other.
// Under the Intel kernel tuning the vdpbf16ps token path takes 4 rows of 256-bit loads instead
// (the form before issue 28, v1's): on the Sapphire Rapids host the library at v1 read BF16 token
// calls 1.07-1.23x faster than one row at 1-16 threads (three alternating rounds, 2026-12-06,
// docs/benchmarks.md "The Intel host again"); one row was only ever measured on the Zen 5 VM.
struct Bf16Paths {
#if defined(__AVX512BF16__)
    using Gemv = PairDp<Vec256>;
    using GemvWide = PairDp<Vec512>;
    using Gemm = PairDp<Vec512>;
    static constexpr int kGemvRows = 1, kRows = 4, kActs = 3;
#elif defined(__AVX512F__)
    using Gemv = PairFma<Vec256>;
    using GemvWide = PairFma<Vec512>;
    using Gemm = PairFma<Vec512>;
    static constexpr int kGemvRows = 4, kRows = 2, kActs = 4;
#else
    using Gemv = PairFma<Vec256>;
    using GemvWide = Gemv;
    using Gemm = PairFma<Vec256>;
    static constexpr int kGemvRows = 2, kRows = 1, kActs = 2;
#endif
};

// GCC's _mm512_reduce_add_ps over 16 lanes (as ggml sums its accumulators): by halves to 8,
// then hsum8.
inline float bf16_reduce16(const float *lanes) {
    const __m256 half = _mm256_add_ps(_mm256_loadu_ps(lanes + 8), _mm256_loadu_ps(lanes));
    return hsum8(half);
}

// The whole-64 part of R x J dots into lanes[j][r][32].
template <class S, int R, int J>
inline void bf16_accumulate(const uint8_t *w, size_t row_bytes, int32_t n64, const uint8_t *x, size_t xq_stride,
                            float (*lanes)[R][kBf16PairLanes]) {
    constexpr int kAccs = kBf16PairLanes / S::kWords;
    constexpr size_t kVecBytes = 4 * size_t(S::kWords);
    typename S::acc acc[J][R][kAccs];
    for (int j = 0; j < J; ++j)
        for (int r = 0; r < R; ++r)
            for (int v = 0; v < kAccs; ++v) acc[j][r][v] = S::zero();
    for (size_t at = 0; at < size_t(n64) * 2; at += 2 * kBf16Chunk)
        for (int v = 0; v < kAccs; ++v) {
            const size_t off = at + kVecBytes * size_t(v);
            typename S::words xv[J];
            for (int j = 0; j < J; ++j) xv[j] = S::load_words(x + size_t(j) * xq_stride + off);
            for (int r = 0; r < R; ++r) {
                const uint8_t *wr = w + size_t(r) * row_bytes + off;
                if ((kVecBytes * size_t(v)) % 64 == 0)  // once per cache line
                    _mm_prefetch(reinterpret_cast<const char *>(wr + kFloatPrefetchBytes), _MM_HINT_T1);
                const typename S::words wv = S::load_words(wr);
                for (int j = 0; j < J; ++j) acc[j][r][v] = S::step(acc[j][r][v], wv, xv[j]);
            }
        }
    for (int j = 0; j < J; ++j)
        for (int r = 0; r < R; ++r)
            for (int v = 0; v < kAccs; ++v) S::store(lanes[j][r] + S::kWords * v, acc[j][r][v]);
}

// The accumulation of an R x J tile, or of `rows` single rows one after another (the token path:
// one MXCSR switch for several rows), out of line, so that DAZ/FTZ covers exactly these fmas and
// not the caller's reduction, which ggml runs without them.
template <class S, int R, int J>
__attribute__((noinline)) void bf16_tile_lanes(const uint8_t *w, size_t row_bytes, int32_t n64, const uint8_t *x,
                                               size_t xq_stride, float (*lanes)[R][kBf16PairLanes]) {
    [[maybe_unused]] DazFtzScope<S::kNeedsDazFtz> daz_ftz;
    bf16_accumulate<S, R, J>(w, row_bytes, n64, x, xq_stride, lanes);
}

// Rows two at a time: a lane's two fmas per pair depend on each other, so one row's 32 lanes
// alone wait on the fma latency (in-cache gemv on a Zen 5: 25 GB/s, against 49 for the 64
// independent lanes of the F32-style order before); two rows double the chains.
template <class S, int R>
inline void bf16_rows_by(const uint8_t *&w, size_t row_bytes, int32_t &r, int32_t rows, int32_t n64, const uint8_t *x,
                         float (*lanes)[kBf16PairLanes]) {
    for (; r + R <= rows; r += R, w += size_t(R) * row_bytes)
        bf16_accumulate<S, R, 1>(w, row_bytes, n64, x, 0, reinterpret_cast<float(*)[R][kBf16PairLanes]>(lanes + r));
}

template <class S, int R = Bf16Paths::kGemvRows>
__attribute__((noinline)) void bf16_row_lanes(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n64,
                                              const uint8_t *x, float (*lanes)[kBf16PairLanes]) {
    [[maybe_unused]] DazFtzScope<S::kNeedsDazFtz> daz_ftz;
    int32_t r = 0;
    bf16_rows_by<S, R>(w, row_bytes, r, rows, n64, x, lanes);
    if constexpr (R > 1) bf16_rows_by<S, 1>(w, row_bytes, r, rows, n64, x, lanes);
}

// r1 + r2 and the tail, as ggml: in double from 0.0 (so that -0.0 + -0.0 gives +0.0 as there),
// the tail's products exact in f32 and unflushed.
inline float bf16_finish(const float *lanes, const uint8_t *w, const uint8_t *x, int32_t n64, int32_t n) {
    double sum = 0.0;
    sum += double(bf16_reduce16(lanes));
    sum += double(bf16_reduce16(lanes + 16));
    for (int32_t i = n64; i < n; ++i) {
        const size_t at = 2 * size_t(i);
        sum += double(bf16_to_f32(load_u16(w + at)) * bf16_to_f32(load_u16(x + at)));
    }
    return float(sum);
}

template <class S, int R, int J>
inline void bf16_tile(const uint8_t *w, size_t row_bytes, int32_t n, const uint8_t *x, size_t xq_stride, float *y,
                      size_t ldy) {
    const int32_t n64 = n - n % kBf16Chunk;
    alignas(64) float lanes[J][R][kBf16PairLanes];
    bf16_tile_lanes<S, R, J>(w, row_bytes, n64, x, xq_stride, lanes);
    for (int j = 0; j < J; ++j)
        for (int r = 0; r < R; ++r)
            y[size_t(j) * ldy + size_t(r)] =
                bf16_finish(lanes[j][r], w + size_t(r) * row_bytes, x + size_t(j) * xq_stride, n64, n);
}

// Rows in groups of kGemvGroup per accumulation call (one MXCSR switch each), two at a time.
inline void bf16_gemv(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, float *y) {
    constexpr int32_t kGemvGroup = 16;
    const uint8_t *x = static_cast<const uint8_t *>(xq);
    const int32_t n64 = n - n % kBf16Chunk;
    alignas(64) float lanes[kGemvGroup][kBf16PairLanes];
    const bool on_lines = gemv_on_lines(w, row_bytes);
    for (int32_t r0 = 0; r0 < rows; r0 += kGemvGroup) {
        const int32_t count = std::min(kGemvGroup, rows - r0);
        const uint8_t *wg = w + size_t(r0) * row_bytes;
        if (Bf16Paths::kGemvRows == 1 && tuned_for(MEMRA_TUNING_INTEL))
            bf16_row_lanes<Bf16Paths::Gemv, 4>(wg, row_bytes, count, n64, x, lanes);
        else if (on_lines)
            bf16_row_lanes<Bf16Paths::GemvWide>(wg, row_bytes, count, n64, x, lanes);
        else
            bf16_row_lanes<Bf16Paths::Gemv>(wg, row_bytes, count, n64, x, lanes);
        for (int32_t r = 0; r < count; ++r) y[r0 + r] = bf16_finish(lanes[r], wg + size_t(r) * row_bytes, x, n64, n);
    }
}

template <int R>
inline void bf16_rows_all_acts(const uint8_t *w, size_t row_bytes, int32_t n, const uint8_t *x, size_t xq_stride,
                               int32_t m, float *y, size_t ldy) {
    using S = Bf16Paths::Gemm;
    constexpr int J = Bf16Paths::kActs;
    int32_t j = 0;
    for (; j + J <= m; j += J)
        bf16_tile<S, R, J>(w, row_bytes, n, x + size_t(j) * xq_stride, xq_stride, y + size_t(j) * ldy, ldy);
    for (; j < m; ++j) bf16_tile<S, R, 1>(w, row_bytes, n, x + size_t(j) * xq_stride, xq_stride, y + size_t(j) * ldy, ldy);
}

inline void bf16_gemm(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, size_t xq_stride,
                      int32_t m, float *y, size_t ldy) {
    const uint8_t *x = static_cast<const uint8_t *>(xq);
    constexpr int R = Bf16Paths::kRows;
    int32_t r = 0;
    for (; r + R <= rows; r += R)
        bf16_rows_all_acts<R>(w + size_t(r) * row_bytes, row_bytes, n, x, xq_stride, m, y + r, ldy);
    for (; r < rows; ++r) bf16_rows_all_acts<1>(w + size_t(r) * row_bytes, row_bytes, n, x, xq_stride, m, y + r, ldy);
}

}  // namespace memra::simd::MEMRA_SIMD_NS
