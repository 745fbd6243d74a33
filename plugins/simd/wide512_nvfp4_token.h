// The AVX-512 builds' token path of NVFP4 on row pairs (simd/common.h TokenRowPairs), as Q8_0,
// Q4_0 and MXFP4 have it (simd/wide512_q8_0_act.h): a tile's 4 rows as two 512-bit registers per
// half block (row r in the low 256 bits, row r + 1 in the high), one decode and one vpdpbusd for
// two rows. NVFP4's four 16-element terms per block and row then come out of ONE integer tree
// for the 4 rows (sixteen sums in one register), its 16 scales computed from the bytes in one
// register, where the 4-row tile of simd/common.h decoded each row alone, reduced every half with
// a tree of its own and looked the scales up one by one: on the Intel host NVFP4's token step
// was the one 32-element format below v1's (docs/benchmarks.md, "Token step v2 against v1 on the
// Intel device host"). The fmas are the canonical order's: per row, sub-blocks 0..3 in order,
// each cvt(S) * (d_w(s) * d_a(half)): the same bits as every other build.
// Included by simd/wide512_q8_0_act.h.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "simd/formats_q8_0_act.h"

namespace memra::simd::MEMRA_SIMD_NS {

struct NVFP4RowPairTile {
    static constexpr bool kEnabled = true;
    static bool chosen() { return true; }

    // Half h of rows p0 and p1 as values + 12 in element order: per row, the 16 code bytes' low
    // nibbles of bytes 0-7 (elements 0-7 of sub-block 2h), their high nibbles (8-15), then bytes
    // 8-15 likewise (sub-block 2h + 1). Each qword is doubled, then shifted by 0 or 4 bits.
    static inline __m512i pair(const uint8_t *p0, const uint8_t *p1, int h) {
        const __m256i q = _mm256_inserti128_si256(_mm256_castsi128_si256(load128(p0 + 4 + 16 * h)),
                                                  load128(p1 + 4 + 16 * h), 1);
        const __m512i twice = _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 0, 1, 1, 2, 2, 3, 3), _mm512_castsi256_si512(q));
        const __m512i codes = _mm512_and_si512(_mm512_srlv_epi64(twice, _mm512_setr_epi64(0, 4, 0, 4, 0, 4, 0, 4)),
                                               _mm512_set1_epi8(0x0F));
        const __m512i table = _mm512_add_epi8(_mm512_broadcast_i32x4(load128(kValuesFp4)), _mm512_set1_epi8(NVFP4::kOffset));
        return _mm512_shuffle_epi8(table, codes);
    }

    // The 16 weight scales ue4m3_half(d[s]) of the 4 rows as [s = 0: rows 0-3 | s = 1 | s = 2 | s = 3],
    // computed from the bytes (scale_byte_tables.h's definition, exactly: bit 7 ignored, 0x00
    // and 0x7F zero; E = 0: M * 2^-10, else (8 + M) * 2^(E - 11), i.e. the f32 with exponent
    // E - 8 and mantissa M << 20; all 256 bytes checked against the table). A gather from the
    // table left the step slower than the generic tile on the Zen 5 VM.
    static inline __m512 scales(const uint8_t *const p[4]) {
        int32_t d[4];
        for (int r = 0; r < 4; ++r) std::memcpy(&d[r], p[r], 4);
        const __m128i by_row = _mm_setr_epi32(d[0], d[1], d[2], d[3]);
        const __m128i by_sub = _mm_shuffle_epi8(by_row, _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
        const __m512i x = _mm512_cvtepu8_epi32(by_sub);
        const __m512i E = _mm512_and_si512(_mm512_srli_epi32(x, 3), _mm512_set1_epi32(0xF));
        const __m512i M = _mm512_and_si512(x, _mm512_set1_epi32(0x7));
        const __m512i normal = _mm512_or_si512(_mm512_slli_epi32(_mm512_add_epi32(E, _mm512_set1_epi32(119)), 23),
                                               _mm512_slli_epi32(M, 20));
        const __m512 subnormal = _mm512_mul_ps(_mm512_cvtepi32_ps(M), _mm512_set1_ps(1.0f / 1024.0f));
        const __mmask16 is_subnormal = _mm512_cmpeq_epi32_mask(E, _mm512_setzero_si512());
        const __mmask16 is_zero = _mm512_cmpeq_epi32_mask(x, _mm512_setzero_si512()) |
                                  _mm512_cmpeq_epi32_mask(x, _mm512_set1_epi32(0x7F));
        return _mm512_maskz_mov_ps(~is_zero, _mm512_mask_blend_ps(is_subnormal, _mm512_castsi512_ps(normal), subnormal));
    }

    static inline void tile(float acc_io[4], const uint8_t *w, size_t row_bytes, int32_t b0, int32_t b1,
                            const NVFP4::Act *x) {
        __m128 acc = _mm_loadu_ps(acc_io);
        PrefetchAhead<NVFP4, 4> prefetch(b0, row_bytes);
        const uint8_t *p[4];
        for (int32_t b = b0; b < b1; ++b) {
            const size_t ahead = prefetch.at_block(b);
            for (int r = 0; r < 4; ++r) {
                p[r] = w + size_t(r) * row_bytes + size_t(b) * NVFP4::kBytes;
                _mm_prefetch(reinterpret_cast<const char *>(p[r] + ahead), _MM_HINT_T1);
            }
            const NVFP4::Act &xb = x[b - b0];
            __m512i lanes[2][2];  // [half][rows 0 | 1, rows 2 | 3]
            for (int h = 0; h < 2; ++h) {
                const __m512i a = _mm512_broadcast_i64x4(xb.h[h].a), base = _mm512_broadcast_i64x4(xb.h[h].base);
                lanes[h][0] = _mm512_dpbusd_epi32(base, pair(p[0], p[1], h), a);
                lanes[h][1] = _mm512_dpbusd_epi32(base, pair(p[2], p[3], h), a);
            }
            // 128-bit lane k of a pair's register holds sub-block 2h + k % 2 of the pair's row k / 2,
            // so two pairwise adds leave lane 0 = [S(0, 0), S(2, 0), S(0, 2), S(2, 2)], lane 1 the
            // same of sub-blocks 1 and 3, lanes 2 and 3 those of rows 1 and 3 (S(row, sub-block)).
            const __m512i sums = hadd512(hadd512(lanes[0][0], lanes[0][1]), hadd512(lanes[1][0], lanes[1][1]));
            const __m512 S = _mm512_cvtepi32_ps(sums);
            const __m512 T = _mm512_shuffle_f32x4(S, S, 0x4E);  // lanes 2, 3, 0, 1
            // Interleaved with the other rows' lane: lo = [sub-block 0 of rows 0-3 | sub-block 1 |
            // ...], hi = [sub-block 2 | sub-block 3 | ...].
            const __m512 lo = _mm512_unpacklo_ps(S, T), hi = _mm512_unpackhi_ps(S, T);
            const __m512 d_a = _mm512_insertf32x8(_mm512_set1_ps(xb.h[0].d), _mm256_set1_ps(xb.h[1].d), 1);
            const __m512 d = _mm512_mul_ps(scales(p), d_a);  // d_w(s) * d_a(half of s), the scalar product
            acc = _mm_fmadd_ps(_mm512_castps512_ps128(lo), _mm512_castps512_ps128(d), acc);
            acc = _mm_fmadd_ps(_mm512_extractf32x4_ps(lo, 1), _mm512_extractf32x4_ps(d, 1), acc);
            acc = _mm_fmadd_ps(_mm512_castps512_ps128(hi), _mm512_extractf32x4_ps(d, 2), acc);
            acc = _mm_fmadd_ps(_mm512_extractf32x4_ps(hi, 1), _mm512_extractf32x4_ps(d, 3), acc);
        }
        _mm_storeu_ps(acc_io, acc);
    }
};

template <>
struct TokenRowPairs<NVFP4> : NVFP4RowPairTile {};

}  // namespace memra::simd::MEMRA_SIMD_NS
