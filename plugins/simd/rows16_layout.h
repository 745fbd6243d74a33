// The 16-row interleaved layout that both rows paths of the AVX-512 builds use: an AMX B tile
// (simd/tile_forms.h) and a VNNI panel (simd/wide512_panel_driver.h) hold, per 64-byte row, one
// 4-byte group of 16 output rows (dword lane n = row n). Each format reaches it by ONE decoder,
// its VNNI panel (simd/wide512_panels*.h), which the AMX tile forms load too (simd/
// tile_panel_forms.h): a transpose of the RAW bytes of 16 rows and the decode on all 16 at once
// (Q8_0, Q4_0, MXFP4, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS; IQ3_S's grid by vpermt2w), or the
// format's per-row decoder and then dense_b below (the chunk panels' per-row forms,
// simd/panels_chunks.h).
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

}  // namespace memra::simd::MEMRA_SIMD_NS
