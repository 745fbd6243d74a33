// The AVX-512 build's VNNI panels (simd/wide512_panel_driver.h) of Q2_K, Q3_K, IQ4_XS and IQ3_S,
// paired with Q8_K activations. Included by simd/wide512_q8_K_act.h.
//
// Q3_K's and IQ3_S's panels come from the formats' own per-row decoders (F::decode: the chunks of
// simd/formats_q8_K_act.h the token path dots) and the 16-row transpose of simd/rows16_layout.h,
// the way the AMX tile forms build their B tiles: one decoder per format for both 16-row layouts
// (a raw-byte decoder was slower for Q3_K, below; IQ3_S's cost is its grid gathers either way).
// Q2_K and IQ4_XS have raw-byte decoders of their own (16 rows' transposed bytes, decoded on all
// 16 at once), because the per-row decode cost them at m = 4 (below). The AMX tiles load Q2_K's
// panels too (simd/tile_forms.h Q2_KPanelTiles: one digit); IQ4_XS's tiles keep the per-row
// decode (they hold v x sc in two digits; these panels hold v + 128 unscaled).
//
// Two shapes, both exact in int32 and followed by the float side of the canonical order v2
// (formats spec §5.3: fmaf((float)S, D_a * d, acc), then for Q2_K fmaf((float)M, -(D_a) * dmin, acc)):
//   scaled (Q2_K, Q3_K): the chunks' scaled weights w' = q * sc fit one unsigned byte after an
//     offset K (Q2_K: 0..45, K = 0; Q3_K: -124..128, K = 124), so S = (64 vpdpbusd) - K * sum(a)
//     per activation, no multiplies; Q2_K's M is 8 vpdpwssd of the rows' mins (int16 pairs) x bsums.
//   sub-blocks (IQ4_XS, IQ3_S): |v * sc| needs two bytes, so the panels hold v + K (IQ4_XS K = 128:
//     1..241; IQ3_S K = 16: 1..31), each 32-element sub-block's 8 vpdpbusd are multiplied by the
//     rows' sc_j (vpmulld, as Q4_K's), and K * sum_j sc_j T_j (4 vpdpwssd of the rows' scale pairs
//     x the activation's T pairs, T_j = bs[2j] + bs[2j + 1]) is taken off.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <type_traits>

#include "simd/rows16_layout.h"
#include "simd/wide512_panels.h"
#include "simd/wide512_panels_q8_K.h"

namespace memra::simd::MEMRA_SIMD_NS {

static_assert(kPanelRows == kRows16, "panels and B tiles share the 16-row layout");

// The panels P[c][g] of the 16 rows' decoded blocks: chunk c's 32 bytes of row r are
// bytes(blk[r], c), transposed (dense_b).
template <class F, class Bytes>
inline void chunk_panels(const uint8_t *const p[kPanelRows], __m512i (*P)[8], typename F::Block blk[kPanelRows],
                         Bytes bytes) {
    decode_rows<F>(p, blk);
    for (int c = 0; c < 8; ++c) {
        __m256i v[kPanelRows];
        for (int r = 0; r < kPanelRows; ++r) v[r] = bytes(blk[r], c);
        dense_b(v, reinterpret_cast<uint8_t *>(P[c]));
    }
}

// Q2_K, Q3_K: the scaled weights of chunk c plus K as unsigned bytes, panels P[c][g].
template <class F, int K, bool kMins>
struct ScaledChunkPanel {
    struct Act {
        int32_t start;  // -K * (sum of the super-block's 256 activation bytes)
        float D;        // D_a
    };
    static inline Act act(const uint8_t *a) {
        int32_t start = 0;
        if constexpr (K != 0) {
            const __m256i s = _mm256_madd_epi16(q8k::bsums(a), _mm256_set1_epi16(1));
            const __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
            start = -K * _mm_cvtsi128_si32(hsum_epi32(h));
        }
        return {start, f32(a)};
    }
    struct Weights {
        alignas(64) __m512i P[8][8];  // [chunk c][dword group g]: w' + K of values 32c + 4g .. + 3
        alignas(64) __m512i mins[kMins ? 8 : 1];  // Q2_K: int16 pairs (min_2k, min_2k+1) of the 16 rows
        __m512 d, dmin;
    };
    static inline void decode(const uint8_t *const p[kPanelRows], Weights &w) {
        typename F::Block blk[kPanelRows];
        chunk_panels<F>(p, w.P, blk, [](const typename F::Block &b, int c) {
            return _mm512_cvtepi16_epi8(_mm512_add_epi16(scaled_chunk<0>(b.k, c), _mm512_set1_epi16(K)));
        });
        w.d = rows_f32([&](int r) { return blk[r].h.d; });
    }  // (Q2_K, the one form with mins, decodes its own: below)
    static inline void apply(__m512 *acc, const Weights &w, const Act *t, const uint8_t *xb, size_t xq_stride,
                             int32_t ms) {
        __m512i S[kMaxM];
        scaled_subblock_sums<8, 8, false>(S, w.P, nullptr, xb + q8_K_act::kQsOffset, xq_stride, ms);
        for (int32_t a = 0; a < ms; ++a) {
            const __m512i s = K != 0 ? _mm512_add_epi32(S[a], _mm512_set1_epi32(t[a].start)) : S[a];
            acc[a] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(w.d, _mm512_set1_ps(t[a].D)), acc[a]);
            if constexpr (kMins) {
                const uint8_t *bs = xb + size_t(a) * xq_stride + q8_K_act::kBsumsOffset;
                __m512i M = _mm512_setzero_si512();
                for (int k = 0; k < 8; ++k)
                    M = _mm512_dpwssd_epi32(M, w.mins[k], _mm512_set1_epi32(load_i32(bs + 4 * k)));
                acc[a] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(M), _mm512_mul_ps(w.dmin, _mm512_set1_ps(-t[a].D)), acc[a]);
            }
        }
    }
};

// Q2_K (scales[16] | qs[64] | fp16 d | fp16 dmin) keeps a second, raw-byte decoder: its panels
// come straight from 16 rows' transposed bytes, 5x fewer operations than 16 per-row decodes +
// dense_b, which at m = 4 cost more than the old path (3.4-3.7 token calls against 2.7). Chunk
// 4i + g is bits 2g, 2g + 1 of qs[32i ..]; its values 16h .. 16h + 15 (panels 4h .. 4h + 3) are
// sub-block s = 2(4i + g) + h, scaled by one vpmullw with the rows' sc_s in both words of each
// lane (every byte q * sc <= 45: no carry into its neighbour).
template <>
struct Panel<Q2_K> : ScaledChunkPanel<Q2_K, 0, true> {
    static inline void decode(const uint8_t *const p[kPanelRows], Weights &w) {
        const __m512i m2 = _mm512_set1_epi8(0x03), m4 = _mm512_set1_epi8(0x0F), low4 = _mm512_set1_epi32(0x0F);
        __m512i ts[4];  // ts[k] lane r: row r's scale bytes 4k .. 4k + 3 (sub-blocks 4k + j)
        transpose16x4(p, 0, ts);
        for (int i = 0; i < 2; ++i)
            for (int h = 0; h < 2; ++h) {
                __m512i t[4];
                transpose16x4(p, 16 + 32 * size_t(i) + 16 * size_t(h), t);
                for (int g = 0; g < 4; ++g) {
                    const int s = 2 * (4 * i + g) + h;
                    const __m512i sc = _mm512_and_si512(_mm512_srli_epi32(ts[s / 4], unsigned(8 * (s % 4))), low4);
                    const __m512i sc16 = _mm512_or_si512(sc, _mm512_slli_epi32(sc, 16));
                    for (int k = 0; k < 4; ++k) {
                        const __m512i q = _mm512_and_si512(_mm512_srli_epi16(t[k], unsigned(2 * g)), m2);
                        w.P[4 * i + g][4 * h + k] = _mm512_mullo_epi16(q, sc16);
                    }
                }
            }
        // (min_2p, min_2p+1) as int16 pairs: the high nibbles of the scale bytes
        for (int k = 0; k < 4; ++k)
            byte_pairs16<false>(_mm512_and_si512(_mm512_srli_epi16(ts[k], 4), m4), w.mins[2 * k], w.mins[2 * k + 1]);
        w.d = fp16_rows(p, 80);
        w.dmin = fp16_rows(p, 82);
    }
};
// Q3_K stays on the per-row decode: a raw-byte decoder of its panels (16 rows' transposed hmask /
// qs / scale bytes, the signed (u - 4) * sc + 124 scaled in even and odd 16-bit words apart) was
// slower at every m on Zen 5 (m = 4 / 8 / 32: 3.3-3.5 / 3.6-3.9 / 5.9-6.3 token calls against
// 3.0 / 3.2 / 5.4): the signed scaling costs 11 operations per panel.
template <>
struct Panel<Q3_K> : ScaledChunkPanel<Q3_K, 124, false> {};

// IQ4_XS, IQ3_S: signed chunks (sign, |v|) with one scale per 32-element chunk (their Head's
// scales16 is scales16_of8: int16 j = sc_j in its low 128 bits).
template <class F, int K>
struct SubBlockChunkPanel : TPairsAct {
    struct Weights {
        alignas(64) __m512i P[8][8];  // [sub-block j][dword group g]: v + K of values 32j + 4g .. + 3
        __m512i sc[8];                // sc_j of the 16 rows (int32)
        __m512i pairs[4];             // int16 pairs (sc_2k, sc_2k+1) of the 16 rows
        __m512 d;
    };
    static inline void decode(const uint8_t *const p[kPanelRows], Weights &w) {
        typename F::Block blk[kPanelRows];
        chunk_panels<F>(p, w.P, blk, [](const typename F::Block &b, int c) {
            return _mm256_add_epi8(_mm256_sign_epi8(b.k.mag[c], b.k.sign[c]), _mm256_set1_epi8(char(K)));
        });
        alignas(16) int16_t s16[kPanelRows][8];
        const uint8_t *q[kPanelRows];
        for (int r = 0; r < kPanelRows; ++r) {
            _mm_store_si128(reinterpret_cast<__m128i *>(s16[r]), _mm256_castsi256_si128(blk[r].h.scales16));
            q[r] = reinterpret_cast<const uint8_t *>(s16[r]);
        }
        transpose16x4(q, 0, w.pairs);
        for (int k = 0; k < 4; ++k) {
            w.sc[2 * k] = _mm512_srai_epi32(_mm512_slli_epi32(w.pairs[k], 16), 16);
            w.sc[2 * k + 1] = _mm512_srai_epi32(w.pairs[k], 16);
        }
        w.d = rows_f32([&](int r) { return blk[r].h.d; });
    }
    static inline void apply(__m512 *acc, const Weights &w, const Act *t, const uint8_t *xb, size_t xq_stride,
                             int32_t ms) {
        static_assert(K == 16 || K == 128, "K * O is a shift");
        constexpr int kShift = K == 16 ? 4 : 7;
        __m512i S[kMaxM];
        scaled_subblock_sums<8, 8>(S, w.P, w.sc, xb + q8_K_act::kQsOffset, xq_stride, ms);
        for (int32_t a = 0; a < ms; ++a) {
            __m512i O = _mm512_setzero_si512();
            for (int k = 0; k < 4; ++k) O = _mm512_dpwssd_epi32(O, w.pairs[k], _mm512_set1_epi32(t[a].T[k]));
            const __m512i s = _mm512_sub_epi32(S[a], _mm512_slli_epi32(O, kShift));
            acc[a] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(w.d, _mm512_set1_ps(t[a].D)), acc[a]);
        }
    }
};

// IQ4_XS (fp16 d | u16 scales_h | scales_l[4] | qs[128]) keeps a second, raw-byte decoder as
// Q2_K does: sub-block sb's 16 bytes at 8 + 16 sb are a nibble panel (low nibbles: values 0-15,
// high: 16-31) through the value table + 128, and sc_sb = (nibble sb of scales_l | bits 2sb,
// 2sb + 1 of scales_h << 4) - 32 on 16 rows at once.
template <>
struct Panel<IQ4_XS> : SubBlockChunkPanel<IQ4_XS, 128> {
    static inline void decode(const uint8_t *const p[kPanelRows], Weights &w) {
        const __m512i table = _mm512_add_epi8(_mm512_broadcast_i32x4(load128(kValuesIq4nl)), _mm512_set1_epi8(char(0x80)));
        for (int sb = 0; sb < 8; ++sb) {
            nibble_panel<Vec512>(p, 8 + 16 * size_t(sb), w.P[sb]);
            for (int g = 0; g < 8; ++g) w.P[sb][g] = _mm512_shuffle_epi8(table, w.P[sb][g]);
        }
        __m512i t[4];  // t[0] lane r: row r's d | scales_h, t[1]: its scales_l
        transpose16x4(p, 0, t);
        const __m512i sh = _mm512_srli_epi32(t[0], 16);
        for (int j = 0; j < 8; ++j) {
            const __m512i lo = _mm512_and_si512(_mm512_srli_epi32(t[1], unsigned(4 * j)), _mm512_set1_epi32(0x0F));
            const __m512i hi = _mm512_and_si512(_mm512_srli_epi32(sh, unsigned(2 * j)), _mm512_set1_epi32(0x03));
            w.sc[j] = _mm512_sub_epi32(_mm512_or_si512(lo, _mm512_slli_epi32(hi, 4)), _mm512_set1_epi32(32));
        }
        for (int k = 0; k < 4; ++k)
            w.pairs[k] = _mm512_or_si512(_mm512_and_si512(w.sc[2 * k], _mm512_set1_epi32(0xFFFF)),
                                         _mm512_slli_epi32(w.sc[2 * k + 1], 16));
        w.d = fp16_rows(p, 0);
    }
};
template <>
struct Panel<IQ3_S> : SubBlockChunkPanel<IQ3_S, 16> {};

template <class F>
struct RowsPath<F, std::enable_if_t<kOneOf<F, Q2_K, Q3_K, IQ4_XS, IQ3_S>>> : SuperBlockPanelRows<F> {};

}  // namespace memra::simd::MEMRA_SIMD_NS
