// The 16-row interleaved layout that both rows paths of the AVX-512 builds use: an AMX B tile
// (simd/tile_forms.h) and a VNNI panel (simd/wide512_panel_driver.h) hold, per 64-byte row, one
// 4-byte group of 16 output rows (dword lane n = row n). Each format reaches it by ONE decoder
// shared by both: either the format's per-row decoder then a transpose of 16 rows (decode_rows +
// dense_b below: IQ4_XS, IQ3_S, Q3_K), or a transpose of the RAW bytes of 16 rows and the decode
// on all 16 at once (simd/wide512_panels*.h: Q8_0, Q4_0, MXFP4, Q2_K; the AMX tiles load those
// panels). IQ4_XS, IQ3_S, Q3_K, Q4_K, Q5_K and Q6_K keep two (plugins/simd/README.md says why):
// raw-byte panels for VNNI (IQ3_S: grid lookups on 16 rows by vpermt2w, simd/wide512_panels_iq3s.h;
// Q3_K unscaled, simd/wide512_panels_chunks.h), per-row decodes for AMX.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "simd/formats_q8_K_act.h"
#include "simd/wide512_panel_driver.h"  // Vec512::dense is defined here

namespace memra::simd::MEMRA_SIMD_NS {

constexpr int kRows16 = 16;       // output rows of a B tile or a panel
constexpr int kRows16Bytes = 64;  // bytes of one of its rows: 16 rows x 4 bytes

// 16 rows' 32 bytes (w[n]: row n) as 8 rows of 64 bytes at b (a dense B tile's, or 8 panels): row k
// = int32 k of every row, a 16 x 8 transpose of int32, done as the classic 8 x 8 transpose in each
// 256-bit half of [row n | row n + 8] (unpack 32, unpack 64, then 128-bit lanes paired).
// GCC 12 warns of the uninitialized operand that _mm512_undefined_epi32() stands for inside
// vpunpck / vinserti64x4 whenever this function is compiled out of line (GCC bug 105593, fixed
// in 13): a false positive, silenced here only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
inline void dense_b(const __m256i *w, uint8_t *b) {
    __m512i v[8], t[8], u[8];
    for (int n = 0; n < 8; ++n) v[n] = _mm512_inserti64x4(_mm512_castsi256_si512(w[n]), w[n + 8], 1);
    for (int p = 0; p < 8; p += 2) {
        t[p] = _mm512_unpacklo_epi32(v[p], v[p + 1]);      // per 128-bit lane: int32 0, 1 of two rows
        t[p + 1] = _mm512_unpackhi_epi32(v[p], v[p + 1]);  // int32 2, 3
    }
    for (int q = 0; q < 8; q += 4) {  // rows 4q' .. 4q' + 3 of each half
        u[q] = _mm512_unpacklo_epi64(t[q], t[q + 2]);      // int32 0 (lanes 0, 2), 4 (lanes 1, 3)
        u[q + 1] = _mm512_unpackhi_epi64(t[q], t[q + 2]);  // 1, 5
        u[q + 2] = _mm512_unpacklo_epi64(t[q + 1], t[q + 3]);  // 2, 6
        u[q + 3] = _mm512_unpackhi_epi64(t[q + 1], t[q + 3]);  // 3, 7
    }
    // int32 k < 4: rows 0-3 from u[k] lane 0, rows 4-7 from u[4 + k] lane 0, rows 8-15 the same
    // from lane 2; k + 4 from lanes 1 and 3.
    const __m512i first = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13), second = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
    for (int k = 0; k < 4; ++k) {
        _mm512_store_si512(b + kRows16Bytes * k, _mm512_permutex2var_epi64(u[k], first, u[4 + k]));
        _mm512_store_si512(b + kRows16Bytes * (k + 4), _mm512_permutex2var_epi64(u[k], second, u[4 + k]));
    }
}
#pragma GCC diagnostic pop

inline void Vec512::dense(const __m256i w[16], I P[8]) { dense_b(w, reinterpret_cast<uint8_t *>(P)); }

// The 16 rows' blocks at p[0..15] by the format's per-row decoder (F::Block, F::decode).
template <class F>
inline void decode_rows(const uint8_t *const p[kRows16], typename F::Block blk[kRows16]) {
    for (int r = 0; r < kRows16; ++r) F::decode(p[r], blk[r]);
}

// The 16 rows' value of one float field as a vector (lane n: row n).
template <class Get>
inline __m512 rows_f32(Get get) {
    alignas(64) float v[kRows16];
    for (int n = 0; n < kRows16; ++n) v[n] = get(n);
    return _mm512_load_ps(v);
}

// The scaled weights w' = (q - QOffset) * scale of chunk c as 32 int16 (scale int16 i multiplies
// elements 2i and 2i + 1, as in Isa::dot4_scaled), from the rows path's stored chunks.
template <int QOffset>
inline __m512i scaled_chunk(const StoredChunks<UChunk> &k, int c) {
    const __m512i sc = _mm512_cvtepu16_epi32(k.sc[c]);
    const __m512i q = _mm512_sub_epi16(_mm512_cvtepu8_epi16(k.q[c]), _mm512_set1_epi16(QOffset));
    return _mm512_mullo_epi16(q, _mm512_or_si512(sc, _mm512_slli_epi32(sc, 16)));
}
template <int QOffset>
inline __m512i scaled_chunk(const StoredChunks<SChunk> &k, int c) {
    static_assert(QOffset == 0, "signed chunks carry their sign");
    const __m512i sc = _mm512_cvtepu16_epi32(k.sc[c]);
    const __m512i mag = _mm512_mullo_epi16(_mm512_cvtepu8_epi16(k.mag[c]), _mm512_or_si512(sc, _mm512_slli_epi32(sc, 16)));
    return _mm512_mask_sub_epi16(mag, _mm256_movepi8_mask(k.sign[c]), _mm512_setzero_si512(), mag);
}

}  // namespace memra::simd::MEMRA_SIMD_NS
