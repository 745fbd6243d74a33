// The rows path (gemm) on tile units: AMX in plugins/amx, its AVX-512 emulation in the test build
// plugins/amx_emulated (both: a `Tiles` layer, simd/tiles_amx.h / simd/tiles_emulated.h). The
// integer work of each block runs on tiles; the float side is the SIMD family's own (each format's
// decode, act, ints and combine, simd/formats_*.h, simd/row_sums.h), so results equal scalar's
// bit for bit.
//
// The B tiles are still diagonal, a layout version 1 of the canonical order needed (eight int32
// lanes per block, each converted on its own): columns are (row r of a row pair, lane k):
// n = 8 r + k, and row g of a B tile (4-byte group g along K) is zero except in columns
// r * 8 + (g mod 8), which hold group g of row r's weights. A C tile row is then one activation's
// 8 lanes of row r0 followed by those of row r1, and the 8 lanes' total is the block's exact
// integer, all that the canonical order v2 (formats spec §5.3) converts. So v2 allows dense tiles
// (16 output rows per B tile, the K-sum of a block in one C element: issue 26 item 4, see
// docs/amx.md); until they are written, 7 of 8 products of every tile instruction are zeros.
//
// Per format form T (Block32Tiles, SuperBlockTiles below):
//   Format                  the SIMD format (kElems, kBytes, kActBytes, Act, Block, Acc, ...)
//   kSteps, kStepBytes      tile K steps per weight block, bytes of activation per step
//   kDigits                 1: B holds the block's unsigned bytes; 2: the scaled weights
//                           w' = q * scale (|w'| < 2^15) as a low unsigned and a high signed digit,
//                           lanes = lo + 256 hi (exact in int32)
//   kPairs                  row pairs per group (sharing each activation block's preparation;
//                           their B tiles, kPairs * kDigits * kSteps KiB at most, stay in L1)
//   kActQs                  where the quants start in an activation block
//   build_b(b0, b1, B)      B[digit][step] for rows r0 and r1 (the decoded blocks)
//   ints(c lo, c hi, blk, x)  the format's Ints from the C tile rows (+ any offset or min term)
#pragma once

#include <cstring>

#include "simd/common.h"
#include "simd/formats_q8_0_act.h"
#include "simd/formats_q8_K_act.h"
#include "simd/tiles_shape.h"

namespace memra::simd::MEMRA_SIMD_NS {

// The tile registers' roles.
constexpr int kTileC = 0, kTileCHi = 1, kTileA = 2, kTileB = 3, kTileBHi = 4;
constexpr int kTileBBytes = kTileRows * kTileRowBytes;  // one B tile in memory (at most 16 groups)

// The 8 groups of 4 bytes of two rows (w0: row r0, w1: row r1) as the 8 rows of a diagonal B
// tile at `b` (64 bytes each): row k = group k of r0 in column k, of r1 in column 8 + k.
inline void diagonal_b(__m256i w0, __m256i w1, uint8_t *b) {
    const __m512i v = _mm512_inserti64x4(_mm512_castsi256_si512(w0), w1, 1);
    for (int k = 0; k < 8; ++k)
        _mm512_store_si512(b + kTileRowBytes * k, _mm512_maskz_mov_epi32(__mmask16(0x0101u << k), v));
}

// Q8_0 and Q4_0 (simd/formats_q8_0_act.h Block32 with an offset K > 0): B = the block's
// unsigned bytes w + K, K = one block; the lanes get x.base (-K times the activation's group
// sums) as Isa::dot4 would have started them.
template <class F>
struct Block32Tiles {
    using Format = F;
    static constexpr int kSteps = 1, kStepBytes = 32, kDigits = 1, kPairs = 4;
    static constexpr size_t kActQs = 2;
    static void build_b(const typename F::Block &b0, const typename F::Block &b1, uint8_t *B) {
        diagonal_b(b0.w, b1.w, B);
    }
    static Ints ints(const int32_t *lo, const int32_t *, const typename F::Block &, const typename F::Act &x) {
        return {_mm256_add_epi32(x.base, load256(lo)), _mm256_setzero_si256()};
    }
};

// The scaled weights w' = q * scale of chunk c as 32 int16 (scale int16 i multiplies elements
// 2i and 2i + 1, as in Isa::dot4_scaled), from the rows path's stored chunks.
inline __m512i scaled_chunk(const StoredChunks<UChunk> &k, int c) {
    const __m512i sc = _mm512_cvtepu16_epi32(k.sc[c]);
    return _mm512_mullo_epi16(_mm512_cvtepu8_epi16(k.q[c]), _mm512_or_si512(sc, _mm512_slli_epi32(sc, 16)));
}
inline __m512i scaled_chunk(const StoredChunks<SChunk> &k, int c) {
    const __m512i sc = _mm512_cvtepu16_epi32(k.sc[c]);
    const __m512i mag = _mm512_mullo_epi16(_mm512_cvtepu8_epi16(k.mag[c]), _mm512_or_si512(sc, _mm512_slli_epi32(sc, 16)));
    return _mm512_mask_sub_epi16(mag, _mm256_movepi8_mask(k.sign[c]), _mm512_setzero_si512(), mag);
}

// The super-block formats (simd/formats_q8_K_act.h SuperBlock): K = two chunks per step, 4 steps
// per super-block, the scales inside the weights (two digits), F::combine as on every build.
template <class F>
struct SuperBlockTiles {
    using Format = F;
    static constexpr int kSteps = 4, kStepBytes = 64, kDigits = 2, kPairs = 2;
    static constexpr size_t kActQs = q8_K_act::kQsOffset;
    static void build_b(const typename F::Block &b0, const typename F::Block &b1, uint8_t *B) {
        for (int c = 0; c < 8; ++c) {  // B[digit][step c / 2], rows 8 (c % 2) ..
            const __m512i w0 = scaled_chunk(b0.k, c), w1 = scaled_chunk(b1.k, c);
            uint8_t *at = B + (c / 2) * kTileBBytes + (c % 2) * 8 * kTileRowBytes;
            diagonal_b(_mm512_cvtepi16_epi8(w0), _mm512_cvtepi16_epi8(w1), at);
            diagonal_b(_mm512_cvtepi16_epi8(_mm512_srai_epi16(w0, 8)), _mm512_cvtepi16_epi8(_mm512_srai_epi16(w1, 8)),
                       at + kSteps * kTileBBytes);
        }
    }
    static Ints ints(const int32_t *lo, const int32_t *hi, const typename F::Block &b, const typename F::Act &x) {
        return F::Fields::ints(b.h, _mm256_add_epi32(load256(lo), _mm256_slli_epi32(load256(hi), 8)), x);
    }
};

// y[j * ldy + r] for rows [0, rows) and activations [0, m <= kMaxM): rows in groups of T::kPairs
// pairs (an odd last row paired with itself, its twin dropped), so that each activation block is
// prepared (F::act) once per group and block; activations in tiles of 16 (a partial last tile
// read from a zero-padded copy, so no load passes the caller's buffer).
template <class T>
void tile_gemm_upto64(Tiles &tiles, const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const uint8_t *xq,
                      size_t xq_stride, int32_t m, float *y, size_t ldy) {
    using F = typename T::Format;
    constexpr int kGroup = 2 * T::kPairs, kBBytes = T::kStepBytes / 4 * kTileRowBytes;
    constexpr int kActBlockQs = T::kSteps * T::kStepBytes;
    alignas(64) uint8_t B[T::kPairs][T::kDigits][T::kSteps][kBBytes];
    alignas(64) int32_t C[T::kPairs][T::kDigits][kTileRows][16];
    alignas(64) uint8_t apad[kTileRows][kActBlockQs];
    std::memset(apad, 0, sizeof apad);
    using V = RowVec<kGroup>;
    typename V::F acc[kMaxM];
    typename F::Block blk[kGroup];
    const typename F::Head *heads[kGroup];
    for (int r = 0; r < kGroup; ++r) heads[r] = &F::head(blk[r]);
    const int32_t nb = n / F::kElems;
    for (int32_t r0 = 0; r0 < rows; r0 += kGroup) {
        // A partial last group repeats its last row (dropped at the end), so every lane computes.
        const int group = rows - r0 < kGroup ? int(rows - r0) : kGroup, pairs = (group + 1) / 2;
        for (int32_t j = 0; j < m; ++j) acc[j] = V::zero();
        for (int32_t b = 0; b < nb; ++b) {
            for (int r = 0; r < kGroup; ++r) {
                const uint8_t *p = w + size_t(r0 + (r < group ? r : group - 1)) * row_bytes + size_t(b) * F::kBytes;
                _mm_prefetch(reinterpret_cast<const char *>(p + prefetch_bytes<F>()), _MM_HINT_T0);
                F::decode(p, blk[r]);
            }
            for (int q = 0; q < pairs; ++q) T::build_b(blk[2 * q], blk[2 * q + 1], &B[q][0][0][0]);
            const typename F::template Scales<kGroup> scales = F::template scales<kGroup>(heads);
            const uint8_t *xb = xq + size_t(b) * F::kActBytes;
            for (int32_t j0 = 0; j0 < m; j0 += kTileRows) {
                const int32_t count = m - j0 < kTileRows ? m - j0 : kTileRows;
                const uint8_t *a = xb + size_t(j0) * xq_stride + T::kActQs;
                size_t a_stride = xq_stride;
                if (count < kTileRows) {
                    for (int32_t i = 0; i < count; ++i) std::memcpy(apad[i], a + size_t(i) * xq_stride, kActBlockQs);
                    a = &apad[0][0], a_stride = kActBlockQs;
                }
                for (int q = 0; q < pairs; ++q) {
                    tiles.template zero<kTileC>();
                    if constexpr (T::kDigits == 2) tiles.template zero<kTileCHi>();
                    for (int s = 0; s < T::kSteps; ++s) {
                        tiles.template load<kTileA>(a + s * T::kStepBytes, a_stride);
                        tiles.template load<kTileB>(B[q][0][s], kTileRowBytes);
                        tiles.template dp_su<kTileC, kTileA, kTileB>();
                        if constexpr (T::kDigits == 2) {
                            tiles.template load<kTileBHi>(B[q][1][s], kTileRowBytes);
                            tiles.template dp_ss<kTileCHi, kTileA, kTileBHi>();
                        }
                    }
                    tiles.template store<kTileC>(C[q][0], 64);
                    if constexpr (T::kDigits == 2) tiles.template store<kTileCHi>(C[q][1], 64);
                }
                for (int32_t i = 0; i < count; ++i) {
                    const typename F::Act x = F::act(xb + size_t(j0 + i) * xq_stride);
                    Ints ints[kGroup];
                    for (int r = 0; r < kGroup; ++r) {
                        const int q = (r < 2 * pairs ? r : 2 * pairs - 1) / 2, h = 8 * (r % 2);
                        ints[r] = T::ints(&C[q][0][i][h], &C[q][T::kDigits - 1][i][h], blk[r], x);
                    }
                    F::template combine<kGroup>(acc[j0 + i], scales, ints, x);
                }
            }
        }
        for (int32_t j = 0; j < m; ++j) {
            float out[kGroup];
            V::store(out, acc[j]);
            for (int r = 0; r < group; ++r) y[size_t(j) * ldy + size_t(r0 + r)] = out[r];
        }
    }
}

template <class T>
void tile_gemm(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, size_t xq_stride,
               int32_t m, float *y, size_t ldy) {
    TileShapes shapes{};
    for (int t : {kTileC, kTileCHi}) shapes.rows[t] = kTileRows, shapes.colsb[t] = kTileRowBytes;
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
