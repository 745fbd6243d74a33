// The super-block tile forms other than Q2_K's (simd/tile_forms.h SuperBlockTiles), B built from
// the AVX-512 VNNI panels' 16-row decode (simd/wide512_panels_chunks.h, wide512_panels_q8_K.h): a
// panel is already a B tile row (lane n = output row n), so the scale multiply runs on the panels,
// 16 rows at once, and the per-row decode, the scaled chunks and the 16 x 8 transposes (dense_b)
// of the per-row form are gone. On the Intel host that build was 40-50% of amx's time at m = 32
// in cache (docs/amx.md). The tiles' S is still the super-block's exact int32 and the float side
// is SuperBlockTiles' own, so results stay scalar's bit for bit.
//
// Two ways to make the scaled weights bytes:
//  - split scale (Q4_K, Q5_K: q unsigned, sc 0..63): sc = sc_lo + 2^s sc_hi with q * sc_lo and
//    q * sc_hi both < 256, so ONE vpmullw per panel and digit scales every byte in place (a
//    word's low byte times sc_lo does not carry into the high byte), both digits unsigned
//    (tdpbsud) and S = C_lo + 2^s C_hi.
//  - product digits (Q6_K, IQ4_XS, IQ3_S: signed values or scales): w' = v * sc in int16 on the
//    even and the odd bytes apart (two vpmullw), then its low byte (unsigned) and high byte
//    (signed) in place: S = C_lo + 256 C_hi; Q3_K, whose w' + 124 fits a byte, keeps that one
//    unsigned digit.
#pragma once

#include <immintrin.h>

#include "simd/tile_forms.h"
#include "simd/wide512_panels_chunks.h"
#include "simd/wide512_panels_q8_K.h"

namespace memra::simd::MEMRA_SIMD_NS {

// sc (int32 lanes) in both 16-bit words of each lane: vpmullw's multiplier of the lane's 4 bytes.
// (sc & 0xFFFF) | sc << 16: a negative sc's high word is its own, not the sign extension.
inline __m512i words_of(__m512i sc) {
    const __m512i low = _mm512_set1_epi32(0xFFFF);
    return _mm512_ternarylogic_epi32(sc, low, _mm512_slli_epi32(sc, 16), 0xEA);  // (A & B) | C
}

// B's tile row of dword group k (the super-block's values 4k .. 4k + 3) in digit `digit`: step
// k / 16 (K = 64), its tile row k % 16, so k itself; the high digit's tiles follow the low's.
inline uint8_t *b_row(uint8_t *B, int digit, int k) { return B + kTileRowBytes * (64 * digit + k); }

// Split scale: panels P[j][g] of unsigned q (q * 2^ScBits - q < 256), sc[j] < 2^(2 ScBits).
template <class F, class Mins, int ScBits>
struct SplitScalePanelTiles : SuperBlockTiles<F, Mins, 2, ScBits, true> {
    using Base = SuperBlockTiles<F, Mins, 2, ScBits, true>;
    using Scales = typename Base::Scales;
    static_assert(Panel<F>::kMaxU * ((1 << ScBits) - 1) < 256, "q * sc_lo must fit a byte");
    static_assert(Panel<F>::kMaxU * (63 >> ScBits) < 256, "q * sc_hi must fit a byte");
    static void build(const uint8_t *const p[kTileGroup], uint8_t *B, Scales &scales) {
        typename Panel<F>::Weights wb;
        Panel<F>::decode(p, wb);
        const __m512i low = _mm512_set1_epi32((1 << ScBits) - 1);
        for (int j = 0; j < 8; ++j) {
            const __m512i lo = words_of(_mm512_and_si512(wb.sc[j], low));
            const __m512i hi = words_of(_mm512_srli_epi32(wb.sc[j], ScBits));
            for (int g = 0; g < 8; ++g) {
                _mm512_store_si512(b_row(B, 0, 8 * j + g), _mm512_mullo_epi16(wb.P[j][g], lo));
                _mm512_store_si512(b_row(B, 1, 8 * j + g), _mm512_mullo_epi16(wb.P[j][g], hi));
            }
        }
        for (int k = 0; k < Mins::kPairs; ++k) _mm512_store_si512(scales.mins[k], wb.mins[k]);
        scales.d = wb.d, scales.dmin = wb.dmin;
    }
};

// Product digits: panels P[j][g] (NSub sub-blocks of G dword groups) of v + K, v signed, times
// the rows' signed sc[j]: |v * sc| < 2^15. Stores the low bytes of w' = v * sc at digit 0 and
// the high bytes at digit 1; or, with an Offset (w' + Offset within 0..255: Q3_K), the low bytes
// of w' + Offset as the one unsigned digit (the combine then takes Offset x the activation's sum
// off: Q3_KPanelTiles).
template <class F, int K, int NSub, int G, int Offset = 0>
struct ProductPanelTiles : SuperBlockTiles<F, NoMins, Offset ? 1 : 2> {
    using Base = SuperBlockTiles<F, NoMins, Offset ? 1 : 2>;
    using Scales = typename Base::Scales;
    static_assert(NSub * G == 64, "a super-block is 64 dword groups");
    static void build(const uint8_t *const p[kTileGroup], uint8_t *B, Scales &scales) {
        typename Panel<F>::Weights wb;
        Panel<F>::decode(p, wb);
        const __m512i k = _mm512_set1_epi8(char(K)), bytes = _mm512_set1_epi16(0x00FF);
        const __m512i offset = _mm512_set1_epi16(Offset);
        for (int j = 0; j < NSub; ++j) {
            const __m512i sc = words_of(wb.sc[j]);
            for (int g = 0; g < G; ++g) {
                const __m512i v = _mm512_sub_epi8(wb.P[j][g], k);  // signed bytes
                const __m512i v_even = _mm512_srai_epi16(_mm512_slli_epi16(v, 8), 8);
                __m512i even = _mm512_mullo_epi16(v_even, sc);
                __m512i odd = _mm512_mullo_epi16(_mm512_srai_epi16(v, 8), sc);
                if constexpr (Offset != 0) even = _mm512_add_epi16(even, offset), odd = _mm512_add_epi16(odd, offset);
                // lo: (even & 0xFF) | odd << 8, as (A & B) | C;
                // hi: (even >> 8) & 0xFF | (odd & 0xFF00), as A ? B : C
                const __m512i odd_lo = _mm512_slli_epi16(odd, 8);
                _mm512_store_si512(b_row(B, 0, G * j + g), _mm512_ternarylogic_epi32(even, bytes, odd_lo, 0xEA));
                if constexpr (Offset == 0) {
                    const __m512i even_hi = _mm512_srli_epi16(even, 8);
                    _mm512_store_si512(b_row(B, 1, G * j + g), _mm512_ternarylogic_epi32(bytes, even_hi, odd, 0xCA));
                }
            }
        }
        scales.d = wb.d;
    }
};

// Q3_K: its AVX-512 panels hold u = q + 4 (0..7) on Q6_K's 16 sub-blocks of 16 with the rows'
// signed sc (simd/panels_chunks.h Q3KSub16Panel); w' = (u - 4) sc is -124..128, so w' + 124 is
// ONE unsigned byte: one digit (tdpbsud: 4 tile products per super-block instead of 8, as Q2_K),
// and S = C - 124 (sum of the activation's 256 bytes), that offset tabulated per call with d_a
// (ActConst).
struct Q3_KPanelTiles : ProductPanelTiles<Q3_K, 4, 16, 4, 124> {
    using Base = SuperBlockTiles<Q3_K, NoMins, 1>;
    using Scales = typename Base::Scales;
    struct ActConst {
        float d;        // D_a
        int32_t start;  // -124 x the sum of the activation's 256 bytes
    };
    static ActConst act_const(const uint8_t *act) {
        const auto t = ScaledChunkPanel<Vec512, 124, false>::act(act);
        return {t.D, t.start};
    }
    static void combine(__m512 &acc, const Scales &w, const int32_t *lo, const int32_t *,
                        const uint8_t *act, ActConst a) {
        const __m512i S = _mm512_add_epi32(_mm512_load_si512(lo), _mm512_set1_epi32(a.start));
        Base::float_side(acc, w, S, act, a.d);
    }
};

using Q4_KPanelTiles = SplitScalePanelTiles<Q4_K, K4Mins, 4>;  // q <= 15: sc = sc_lo + 16 sc_hi
using Q5_KPanelTiles = SplitScalePanelTiles<Q5_K, K4Mins, 3>;  // q <= 31: sc = sc_lo + 8 sc_hi
using Q6_KPanelTiles = ProductPanelTiles<Q6_K, 32, 16, 4>;     // u = q + 32
using IQ4_XSPanelTiles = ProductPanelTiles<IQ4_XS, kIq4xsPanelK, 8, 8>;
using IQ3_SPanelTiles = ProductPanelTiles<IQ3_S, 16, 8, 8>;

}  // namespace memra::simd::MEMRA_SIMD_NS
