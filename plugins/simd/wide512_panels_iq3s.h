// The AVX-512 build's IQ3_S panels of 16 rows decoded on all 16 rows at once, from their raw bytes
// (IQ3_S: fp16 d | qs[64] | qh[8] | signs[32] | scales[4]); the apply side is the sub-block panels'
// of simd/panels_chunks.h (SubBlockChunkPanel, K = 16). The 8-row panels of the 256-bit builds and
// the AMX tiles keep the per-row decoder (F::chunk: one 8-entry vpgatherdd per chunk and row).
//
// Why: panel g of sub-block c holds, in lane r, row r's 4 values of one grid entry (index qs[8c +
// g] | bit g of qh[c] << 8), so a panel is 16 lookups into the 512-entry grid. vpgatherdd costs
// about 1.3-1.8 cycles per element on the Zen 5 VM (1024 per 16-row block), which made the
// per-row decode + transpose about half of the rows call at m = 32. Here each grid entry is a
// 16-bit code (its 4 magnitudes, odd 1..15, as nibbles), looked up 32 at a time by vpermt2w over
// 8 tables of 64 codes (the 9-bit index's bits 6-8 pick the table by a blend tree), and the
// nibbles spread to bytes by two unpacks that leave the panels in place. AVX512BW only (no VBMI:
// the avx512bf16 row must run on Cooper Lake). The same bytes as the per-row decoder: v + 16,
// v = +-magnitude by the sign bit.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "common/tables.h"
#include "simd/panels_chunks.h"
#include "simd/wide512_panel_driver.h"

namespace memra::simd::MEMRA_SIMD_NS {

// Grid entry i as a 16-bit code: magnitude t (byte t of kIq3sGrid[i], <= 15) in nibble t.
struct Iq3sCodes {
    alignas(64) uint16_t v[512];
};
constexpr Iq3sCodes iq3s_codes() {
    Iq3sCodes c{};
    for (int i = 0; i < 512; ++i) {
        const uint32_t g = kIq3sGrid[i];
        c.v[i] = uint16_t((g & 0xF) | ((g >> 8) & 0xF) << 4 | ((g >> 16) & 0xF) << 8 | ((g >> 24) & 0xF) << 12);
    }
    return c;
}
inline constexpr Iq3sCodes kIq3sCodes = iq3s_codes();

// The per-128-bit-lane byte constants of the decode below (vpshufb controls, shift counts, bit
// tests), built at compile time: made at run time, each cost a store-forwarding stall.
struct Iq3sLaneConsts {
    alignas(16) uint8_t idx[2][16];   // [half]: word 4p + i = qs byte 4i + 2 half + p, zero-extended
    alignas(16) uint8_t shift[4][16];  // [2 hh + half]: word 4p + i = 4 hh + 2 half + p (= the group g)
    alignas(16) uint8_t qh[4][16];     // [sb % 4]: every word's high byte = byte sb % 4 of its row's dword
    alignas(16) uint8_t rep[4][16];    // [g / 2]: byte 4i + t = byte g / 2 of dword i
    alignas(16) uint8_t bit[2][16];    // [g % 2]: byte 4i + t = 1 << (4 (g % 2) + t)
};
constexpr Iq3sLaneConsts iq3s_lane_consts() {
    Iq3sLaneConsts c{};
    for (int j = 0; j < 16; ++j) {
        const int w = j / 2, odd = j % 2;  // word w = 4p + i
        for (int half = 0; half < 2; ++half) c.idx[half][j] = uint8_t(odd ? 0x80 : 4 * (w % 4) + 2 * half + w / 4);
        for (int x = 0; x < 4; ++x) c.shift[x][j] = uint8_t(odd ? 0 : 4 * (x / 2) + 2 * (x % 2) + w / 4);
        for (int b = 0; b < 4; ++b) c.qh[b][j] = uint8_t(odd ? 4 * (w % 4) + b : 0x80);
        for (int b = 0; b < 4; ++b) c.rep[b][j] = uint8_t(4 * (j / 4) + b);
        for (int b = 0; b < 2; ++b) c.bit[b][j] = uint8_t(1 << (4 * b + j % 4));
    }
    return c;
}
inline constexpr Iq3sLaneConsts kIq3sLane = iq3s_lane_consts();
inline __m512i lane_const(const uint8_t (&b)[16]) { return _mm512_broadcast_i32x4(load128(b)); }

template <>
struct Panel<IQ3_S> : SubBlockChunkPanel<Vec512, 16> {
    using I = __m512i;
    using Weights = typename SubBlockChunkPanel<Vec512, 16>::Weights;
    static constexpr int kMaxU = 31;

    // The codes of 32 9-bit grid indices (one per word).
    static inline I codes(I idx) {
        const __mmask32 b6 = _mm512_test_epi16_mask(idx, _mm512_set1_epi16(0x40));
        const __mmask32 b7 = _mm512_test_epi16_mask(idx, _mm512_set1_epi16(0x80));
        const __mmask32 b8 = _mm512_test_epi16_mask(idx, _mm512_set1_epi16(0x100));
        I q[4];
        for (int s = 0; s < 4; ++s) {
            const uint16_t *t = kIq3sCodes.v + 128 * s;  // tables 2s and 2s + 1, 64 codes each
            const I lo = _mm512_permutex2var_epi16(_mm512_load_si512(t), idx, _mm512_load_si512(t + 32));
            const I hi = _mm512_permutex2var_epi16(_mm512_load_si512(t + 64), idx, _mm512_load_si512(t + 96));
            q[s] = _mm512_mask_blend_epi16(b6, lo, hi);
        }
        return _mm512_mask_blend_epi16(b8, _mm512_mask_blend_epi16(b7, q[0], q[1]), _mm512_mask_blend_epi16(b7, q[2], q[3]));
    }

    // Panels 4hh .. 4hh + 3 of one sub-block from x (lane L dword i: row 4L + i's qs bytes of those
    // 4 groups) and h (every word's high byte: the row's qh byte of the sub-block): two vectors of
    // 32 indices, word 4p + i of a lane = (row 4L + i, group 4hh + p) for p = 0, 1 and 2, 3, so the
    // nibble unpacks below yield the panels with dword i of lane L = row 4L + i.
    static inline void quad(I x, I h, int hh, I *P) {
        for (int half = 0; half < 2; ++half) {
            const I ctrl = lane_const(kIq3sLane.idx[half]), shift = lane_const(kIq3sLane.shift[2 * hh + half]);
            // idx = qs byte | (bit g of qh) << 8
            const I idx = _mm512_ternarylogic_epi32(_mm512_shuffle_epi8(x, ctrl), _mm512_srlv_epi16(h, shift),
                                                    _mm512_set1_epi16(0x100), 0xF8);  // A | (B & C)
            const I code = codes(idx);
            // magnitudes (m0, m2) and (m1, m3) of each word as bytes, plus 16
            const I m4 = _mm512_set1_epi16(0x0F0F), k16 = _mm512_set1_epi8(16);
            const I lo = _mm512_ternarylogic_epi32(code, m4, k16, 0xEA);  // (A & B) | C
            const I hi = _mm512_ternarylogic_epi32(_mm512_srli_epi16(code, 4), m4, k16, 0xEA);
            P[2 * half] = _mm512_unpacklo_epi8(lo, hi);
            P[2 * half + 1] = _mm512_unpackhi_epi8(lo, hi);
        }
    }

    // Panel g's bytes 16 + m negated to 16 - m where the value's sign bit is set (s: lane L dword
    // i = row 4L + i's 32 sign bits of the sub-block; value 4g + t's bit is 4g + t).
    static inline I signed_panel(I u, I s, int g) {
        const I rep = _mm512_shuffle_epi8(s, lane_const(kIq3sLane.rep[g / 2]));
        const __mmask64 neg = _mm512_test_epi8_mask(rep, lane_const(kIq3sLane.bit[g % 2]));
        return _mm512_mask_sub_epi8(u, neg, _mm512_set1_epi8(32), u);
    }

    // Past the activation groups (m > kGroupedSumsMaxM) the sums run out of line: inlined into the
    // driver beside this decode (its lookup tables and lane constants held in registers), GCC
    // spilled 4 of a pass's 16 panels in the loop over the activations. Up to the groups (and the
    // token path through these panels, m = 1) they stay inline: out of line there, the token call
    // and IQ4_XS's gemm4 were slower.
    using Sums = SubBlockChunkPanel<Vec512, 16>;
    static inline void apply(__m512 *acc, const Weights &w, const Act *t, const uint8_t *xb,
                             size_t xq_stride, int32_t ms) {
        if (ms <= kGroupedSumsMaxM) return Sums::apply(acc, w, t, xb, xq_stride, ms);
        apply_passes(acc, w, t, xb, xq_stride, ms);
    }
    __attribute__((noinline)) static void apply_passes(__m512 *acc, const Weights &w, const Act *t,
                                                       const uint8_t *xb, size_t xq_stride,
                                                       int32_t ms) {
        Sums::apply(acc, w, t, xb, xq_stride, ms);
    }

    static inline void decode(const uint8_t *const p[], Weights &w) {
        I a[4], b[4], c[4];  // a: qh[0..3], qh[4..7], signs of sub-blocks 0, 1; b: 2..5; c: 5, 6, 7, scales
        panel_transpose<Vec512>(p, 66, a);
        panel_transpose<Vec512>(p, 82, b);
        panel_transpose<Vec512>(p, 94, c);
        const I signs[8] = {a[2], a[3], b[0], b[1], b[2], b[3], c[1], c[2]};
        for (int q = 0; q < 4; ++q) {
            I t[4];  // t[k]: qs[16q + 4k ..] = sub-block 2q + k / 2, groups 4 (k % 2) ..
            panel_transpose<Vec512>(p, 2 + 16 * size_t(q), t);
            for (int k = 0; k < 4; ++k) {
                const int sb = 2 * q + k / 2, hh = k % 2;
                const I h = _mm512_shuffle_epi8(a[sb / 4], lane_const(kIq3sLane.qh[sb % 4]));
                I *P = w.P[sb] + 4 * hh;
                quad(t[k], h, hh, P);
                for (int g = 0; g < 4; ++g) P[g] = signed_panel(P[g], signs[sb], 4 * hh + g);
            }
        }
        // sc_j = 1 + 2 * (nibble j of the scales), int32
        for (int j = 0; j < 8; ++j) {
            const I nib = _mm512_and_si512(_mm512_srli_epi32(c[3], unsigned(4 * j)), _mm512_set1_epi32(0x0F));
            w.sc[j] = _mm512_add_epi32(_mm512_add_epi32(nib, nib), _mm512_set1_epi32(1));
        }
        w.d = panel_fp16<Vec512>(p, 0);
    }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
