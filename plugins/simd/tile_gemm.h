// The rows path (gemm) on tile units: AMX in plugins/amx, its AVX-512 emulation in the test build
// plugins/amx_emulated (both: a `Tiles` layer, simd/tiles_amx.h / simd/tiles_emulated.h), with
// dense tiles in the canonical order v2 (formats spec §5.3): per 16 output rows and weight block,
// B tiles hold the 16 rows' decoded block (its 4-byte groups as tile rows, the rows as int32
// columns: simd/tile_forms.h), A tiles 16 activations' quants read in place, so each C element is
// one (activation, row, block) exact int32: one tdpbssd per 32-element block (Q8_0, Q4_0, MXFP4),
// 4 x 2 per 256-element super-block (K = 64 steps, two digits of the scaled weights). The float
// epilogue is one zmm over the 16 rows per activation: cvt, fma with the rows' d times d_a (and
// the min term for Q2_K / Q4_K / Q5_K), so results equal scalar's bit for bit and do not depend
// on m (batch invariance).
//
// Activation tiles alternate between two C tile sets, so that the tile unit computes one tile
// while the float side reads the previous one (program order: dots of tile t, then the epilogue
// of tile t - 1).
#pragma once

#include <cstring>

#include "simd/tile_forms.h"

namespace memra::simd::MEMRA_SIMD_NS {

// The tile registers' roles: two C sets (low and high digit), A, and B per digit.
constexpr int kTileA = 2, kTileB = 3, kTileBHi = 4;
constexpr int kTileC[2] = {0, 5}, kTileCHi[2] = {1, 6};

// C[slot] (and CHi[slot]) = the activation tile at a (stride a_stride) against the B tiles.
template <class T, int Slot>
inline void tile_dots(Tiles &tiles, const uint8_t *a, size_t a_stride, const uint8_t *B, int32_t *C) {
    constexpr int kC = kTileC[Slot], kCHi = kTileCHi[Slot];
    constexpr int kBBytes = T::kStepBytes / 4 * kTileRowBytes;
    tiles.template zero<kC>();
    if constexpr (T::kDigits == 2) tiles.template zero<kCHi>();
    for (int s = 0; s < T::kSteps; ++s) {
        tiles.template load<kTileA>(a + s * T::kStepBytes, a_stride);
        tiles.template load<kTileB>(B + s * kBBytes, kTileRowBytes);
        if constexpr (T::kDigits == 2) {
            tiles.template dp_su<kC, kTileA, kTileB>();
            tiles.template load<kTileBHi>(B + (T::kSteps + s) * kBBytes, kTileRowBytes);
            tiles.template dp_ss<kCHi, kTileA, kTileBHi>();
        } else if constexpr (T::kUnsignedB) {
            tiles.template dp_su<kC, kTileA, kTileB>();
        } else {
            tiles.template dp_ss<kC, kTileA, kTileB>();
        }
    }
    tiles.template store<kC>(C, kTileRowBytes);
    if constexpr (T::kDigits == 2) tiles.template store<kCHi>(C + kTileRows * 16, kTileRowBytes);
}

// y[j * ldy + r] for rows [0, rows) and activations [0, m <= kMaxM): rows in groups of 16 (a
// partial last group repeats its last row, dropped at the end), each weight block decoded once
// for all m activations; activations in tiles of 16 (a partial last tile read from a zero-padded
// copy, so no load passes the caller's buffer).
template <class T>
void tile_gemm_upto64(Tiles &tiles, const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const uint8_t *xq,
                      size_t xq_stride, int32_t m, float *y, size_t ldy) {
    using F = typename T::Format;
    constexpr int kBBytes = T::kStepBytes / 4 * kTileRowBytes;
    constexpr int kActBlockQs = T::kSteps * T::kStepBytes;
    alignas(64) uint8_t B[T::kDigits * T::kSteps * kBBytes];
    alignas(64) int32_t C[2][T::kDigits][kTileRows][16];
    alignas(64) uint8_t apad[kTileRows][kActBlockQs];
    std::memset(apad, 0, sizeof apad);
    __m512 acc[kMaxM];
    const uint8_t *p[kTileGroup];
    const int32_t nb = n / F::kElems, act_tiles = (m + kTileRows - 1) / kTileRows;
    for (int32_t r0 = 0; r0 < rows; r0 += kTileGroup) {
        const int group = rows - r0 < kTileGroup ? int(rows - r0) : kTileGroup;
        for (int32_t j = 0; j < m; ++j) acc[j] = _mm512_setzero_ps();
        for (int32_t b = 0; b < nb; ++b) {
            for (int r = 0; r < kTileGroup; ++r) {
                p[r] = w + size_t(r0 + (r < group ? r : group - 1)) * row_bytes + size_t(b) * F::kBytes;
                _mm_prefetch(reinterpret_cast<const char *>(p[r] + prefetch_bytes<F>()), _MM_HINT_T0);
            }
            typename T::Scales scales;
            T::build(p, B, scales);
            const uint8_t *xb = xq + size_t(b) * F::kActBytes;
            auto dots = [&](int32_t t) {
                const int32_t j0 = t * kTileRows, count = m - j0 < kTileRows ? m - j0 : kTileRows;
                const uint8_t *a = xb + size_t(j0) * xq_stride + T::kActQs;
                size_t a_stride = xq_stride;
                if (count < kTileRows) {
                    for (int32_t i = 0; i < count; ++i) std::memcpy(apad[i], a + size_t(i) * xq_stride, kActBlockQs);
                    a = &apad[0][0], a_stride = kActBlockQs;
                }
                if (t % 2 == 0) tile_dots<T, 0>(tiles, a, a_stride, B, &C[0][0][0][0]);
                else tile_dots<T, 1>(tiles, a, a_stride, B, &C[1][0][0][0]);
            };
            auto epilogue = [&](int32_t t) {
                const int32_t j0 = t * kTileRows, count = m - j0 < kTileRows ? m - j0 : kTileRows;
                for (int32_t i = 0; i < count; ++i)
                    T::combine(acc[j0 + i], scales, C[t % 2][0][i], C[t % 2][T::kDigits - 1][i],
                               xb + size_t(j0 + i) * xq_stride);
            };
            for (int32_t t = 0; t < act_tiles; ++t) {
                dots(t);
                if (t > 0) epilogue(t - 1);
            }
            epilogue(act_tiles - 1);
        }
        const __mmask16 keep = group == kTileGroup ? kAllRows : __mmask16((1u << group) - 1u);
        for (int32_t j = 0; j < m; ++j) _mm512_mask_storeu_ps(y + size_t(j) * ldy + size_t(r0), keep, acc[j]);
    }
}

template <class T>
void tile_gemm(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, size_t xq_stride,
               int32_t m, float *y, size_t ldy) {
    TileShapes shapes{};
    for (int s = 0; s < 2; ++s)
        for (int t : {kTileC[s], kTileCHi[s]}) shapes.rows[t] = kTileRows, shapes.colsb[t] = kTileRowBytes;
    shapes.rows[kTileA] = kTileRows, shapes.colsb[kTileA] = T::kStepBytes;
    for (int t : {kTileB, kTileBHi}) shapes.rows[t] = T::kStepBytes / 4, shapes.colsb[t] = kTileRowBytes;
    Tiles tiles;
    tiles.configure(shapes);
    const uint8_t *x = static_cast<const uint8_t *>(xq);
    for (int32_t j = 0; j < m; j += kMaxM)  // beyond the interface's 64: in slices
        tile_gemm_upto64<T>(tiles, w, row_bytes, rows, n, x + size_t(j) * xq_stride, xq_stride,
                            m - j < kMaxM ? m - j : kMaxM, y + size_t(j) * ldy, ldy);
    tiles.release();
}

}  // namespace memra::simd::MEMRA_SIMD_NS
