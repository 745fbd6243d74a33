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
// The blocks are software-pipelined (tile_gemm_upto64), so that the decode of one block, the tile
// dots of the one before and the epilogue of the one before that overlap.
#pragma once

#include <cstring>
#include <type_traits>

#include "simd/next_tile_prefetch.h"
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
            if constexpr (T::kHiUnsigned) tiles.template dp_su<kCHi, kTileA, kTileBHi>();
            else tiles.template dp_ss<kCHi, kTileA, kTileBHi>();
        } else if constexpr (T::kUnsignedB) {
            tiles.template dp_su<kC, kTileA, kTileB>();
        } else {
            tiles.template dp_ss<kC, kTileA, kTileB>();
        }
    }
    tiles.template store<kC>(C, kTileRowBytes);
    if constexpr (T::kDigits == 2) tiles.template store<kCHi>(C + kTileRows * 16, kTileRowBytes);
}

// The activations' constants of a call (T::ActConst: the scale d_a as a float, and for Q3_K the
// offset term of its panels too), per block and activation (entry b * m + j), once per call
// rather than once per (activation, block, 16 rows) in the epilogue (an fp16 conversion for the
// 32-element formats; not measured apart from the m-row tiles, with which it went in). 64 KiB on
// the stack as the VNNI panels' table (simd/panel_driver.h); the activations of a call whose
// m x blocks do not fit are taken in slices (each a pass over the rows), and a row too long for
// one activation's table computes them in the epilogue.
constexpr size_t kActTableBytes = 64 * 1024;

// y[j * ldy + r] for rows [0, rows) and activations [0, m <= kMaxM): rows in groups of 16 (a
// partial last group repeats its last row, dropped at the end), each weight block decoded once
// for all m activations; activations in tiles of tile_rows (a partial last tile read from a
// zero-padded copy, so no load passes the caller's buffer). d_a: the activations' constants as
// above, or nullptr.
//
// Software-pipelined over the blocks: iteration b runs the tile dots of block b (its B built in
// iteration b - 1), then builds block b + 1's B, then the float epilogue of block b - 1 (its C
// stored in iteration b - 1). A tileloadd of B right after the vector stores that build it, and
// vector loads of C right after the tilestored, wait for those stores to complete (neither
// forwards), which serialized the decode, the tile unit and the epilogue block after block. In
// cache on the Intel device host, with the m-row tiles below, amx's time at m = 32 went from
// 0.96-1.05 of avx512bf16's to 0.51-0.83 on Q4_0 / Q8_0, from 1.05-1.47 to 0.76-0.87 on Q4_K
// (two rounds of a noisy host: docs/amx.md). Each output's chain is still its blocks in K
// order (batch invariance and scalar's bits untouched).
//
// The epilogue takes T::kEpilogueBlocks (G) blocks at a time, each activation's 16-row
// accumulator in a register across them (one load and store of acc[j] per G blocks instead of per
// block; the same fma order per lane): every G blocks, after block b's dots, the epilogue of
// blocks b + 1 - 2G .. b - G, so C and the scales live in rings of 2G and 2G + 1 blocks.
template <class T>
void tile_gemm_upto64(Tiles &tiles, int32_t tile_rows, const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n,
                      const uint8_t *xq, size_t xq_stride, int32_t m,
                      const typename T::ActConst *d_a, float *y, size_t ldy) {
    using F = typename T::Format;
    constexpr int kBBytes = T::kStepBytes / 4 * kTileRowBytes;
    constexpr int kActBlockQs = T::kSteps * T::kStepBytes;
    constexpr int kActTiles = kMaxM / kTileRows;
    alignas(64) uint8_t B[2][T::kDigits * T::kSteps * kBBytes];
    constexpr int G = T::kEpilogueBlocks, kCSlots = 2 * G, kScaleSlots = 2 * G + 1;
    alignas(64) int32_t C[kCSlots][kActTiles][T::kDigits][kTileRows][16];
    alignas(64) uint8_t apad[kTileRows][kActBlockQs];
    typename T::Scales scales[kScaleSlots];  // block b + 1's are built before b + 1 - 2G's epilogue
    std::memset(apad, 0, sizeof apad);
    __m512 acc[kMaxM];
    const int32_t nb = n / F::kElems, act_tiles = (m + kTileRows - 1) / kTileRows;
    for (int32_t r0 = 0; r0 < rows; r0 += kTileGroup) {
        const int group = rows - r0 < kTileGroup ? int(rows - r0) : kTileGroup;
        // The VNNI panels' rule (measured there, from DRAM); for the tiles only in cache, where
        // the driver with and without it ran even.
        NextTilePrefetch next_tile(r0 + kTileGroup < rows ? w + size_t(r0 + kTileGroup) * row_bytes : nullptr,
                                   size_t(kTileGroup) * row_bytes, nb);
        auto build = [&](int32_t b) {
            const uint8_t *p[kTileGroup];
            for (int r = 0; r < kTileGroup; ++r) {
                p[r] = w + size_t(r0 + (r < group ? r : group - 1)) * row_bytes + size_t(b) * F::kBytes;
                _mm_prefetch(reinterpret_cast<const char *>(p[r] + prefetch_bytes<F>()), _MM_HINT_T0);
            }
            next_tile.share(b, 0);
            T::build(p, B[b % 2], scales[b % kScaleSlots]);
            next_tile.share(b, 1);
        };
        auto dots = [&](int32_t b) {
            const uint8_t *xb = xq + size_t(b) * F::kActBytes + T::kActQs;
            for (int32_t t = 0; t < act_tiles; ++t) {
                const int32_t j0 = t * kTileRows, count = m - j0 < kTileRows ? m - j0 : kTileRows;
                const uint8_t *a = xb + size_t(j0) * xq_stride;
                size_t a_stride = xq_stride;
                if (count < tile_rows) {
                    for (int32_t i = 0; i < count; ++i) std::memcpy(apad[i], a + size_t(i) * xq_stride, kActBlockQs);
                    a = &apad[0][0], a_stride = kActBlockQs;
                }
                // The two C register sets alternate, so a tile's store overlaps the next's dots.
                int32_t *c = &C[b % kCSlots][t][0][0][0];
                if (t % 2 == 0) tile_dots<T, 0>(tiles, a, a_stride, B[b % 2], c);
                else tile_dots<T, 1>(tiles, a, a_stride, B[b % 2], c);
            }
        };
        // Blocks b0 .. b0 + K - 1 for every activation, K a constant (G, or 1 at the end), each
        // block's C slot, scales and activation constants taken once per pass: computed per
        // activation and block, the C addresses cost as much scalar work as the float side.
        auto epilogue = [&](int32_t b0, auto blocks) {
            constexpr int K = decltype(blocks)::value;
            constexpr size_t kDigitInts = size_t(kTileRows) * 16;
            constexpr size_t kTileInts = T::kDigits * kDigitInts;
            const int32_t *c[K];
            const typename T::Scales *sc[K];
            const uint8_t *xb[K];
            const typename T::ActConst *db[K];
            for (int k = 0; k < K; ++k) {
                const int32_t b = b0 + k;
                c[k] = &C[b % kCSlots][0][0][0][0], sc[k] = &scales[b % kScaleSlots];
                xb[k] = xq + size_t(b) * F::kActBytes;
                db[k] = d_a ? d_a + size_t(b) * size_t(m) : nullptr;
            }
            for (int32_t j = 0; j < m; ++j) {
                const size_t at = size_t(j / kTileRows) * kTileInts + size_t(j % kTileRows) * 16;
                __m512 a = acc[j];
                for (int k = 0; k < K; ++k) {
                    const uint8_t *act = xb[k] + size_t(j) * xq_stride;
                    T::combine(a, *sc[k], c[k] + at, c[k] + at + (T::kDigits - 1) * kDigitInts, act,
                               db[k] ? db[k][j] : T::act_const(act));
                }
                acc[j] = a;
            }
        };
        using Group = std::integral_constant<int, G>;
        using One = std::integral_constant<int, 1>;
        for (int32_t j = 0; j < m; ++j) acc[j] = _mm512_setzero_ps();
        if (nb > 0) build(0);
        int32_t done = 0;  // blocks whose epilogue ran
        for (int32_t b = 0; b < nb; ++b) {
            dots(b);
            if (b + 1 < nb) build(b + 1);
            if ((b + 1) % G == 0 && b + 1 >= 2 * G) epilogue(done, Group()), done += G;
        }
        for (; done + G <= nb; done += G) epilogue(done, Group());
        for (; done < nb; ++done) epilogue(done, One());
        const __mmask16 keep = group == kTileGroup ? kAllRows : __mmask16((1u << group) - 1u);
        for (int32_t j = 0; j < m; ++j) _mm512_mask_storeu_ps(y + size_t(j) * ldy + size_t(r0), keep, acc[j]);
    }
}

template <class T>
void tile_gemm(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, size_t xq_stride,
               int32_t m, float *y, size_t ldy) {
    using F = typename T::Format;
    // A call of fewer than 16 activations configures A and C tiles of that many rows: the tile
    // loads, dots and stores then do no work on padding rows, and A is read in place (in cache on
    // the Intel host, m = 4, amx over avx512bf16: Q4_0 2.0-2.3 -> 1.05-1.55, Q8_0 1.6-2.2 ->
    // 0.9-1.1, pipelined before and after).
    const int32_t tile_rows = m < kTileRows ? m : kTileRows;
    TileShapes shapes{};
    for (int s = 0; s < 2; ++s)
        for (int t : {kTileC[s], kTileCHi[s]}) shapes.rows[t] = uint8_t(tile_rows), shapes.colsb[t] = kTileRowBytes;
    shapes.rows[kTileA] = uint8_t(tile_rows), shapes.colsb[kTileA] = T::kStepBytes;
    for (int t : {kTileB, kTileBHi}) shapes.rows[t] = T::kStepBytes / 4, shapes.colsb[t] = kTileRowBytes;
    Tiles tiles;
    tiles.configure(shapes);
    const uint8_t *x = static_cast<const uint8_t *>(xq);
    const int32_t nb = n / F::kElems;
    constexpr size_t kEntries = kActTableBytes / sizeof(typename T::ActConst);
    const int32_t fit = nb > 0 ? int32_t(kEntries / size_t(nb)) : kMaxM;
    const int32_t slice = fit < 1 ? kMaxM : fit < kMaxM ? fit : kMaxM;  // beyond the interface's 64, too
    typename T::ActConst d_a[kEntries];
    for (int32_t j0 = 0; j0 < m; j0 += slice) {
        const int32_t ms = m - j0 < slice ? m - j0 : slice;
        const uint8_t *xs = x + size_t(j0) * xq_stride;
        if (fit >= 1)
            for (int32_t b = 0; b < nb; ++b)
                for (int32_t j = 0; j < ms; ++j)
                    d_a[size_t(b) * size_t(ms) + size_t(j)] =
                        T::act_const(xs + size_t(j) * xq_stride + size_t(b) * F::kActBytes);
        tile_gemm_upto64<T>(tiles, tile_rows, w, row_bytes, rows, n, xs, xq_stride, ms, fit >= 1 ? d_a : nullptr,
                            y + size_t(j0) * ldy, ldy);
    }
    tiles.release();
}

}  // namespace memra::simd::MEMRA_SIMD_NS
