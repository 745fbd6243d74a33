// Each format's tile form for the dense tile driver (simd/tile_gemm.h): how 16 output rows' weight
// blocks become B tiles, and the float epilogue of the canonical order v2 (formats spec §5.3) over
// those 16 rows, one zmm per activation. A B tile's rows are a block's 4-byte groups along K and
// its 16 int32 columns are the 16 output rows (bytes 4k..4k+3 of row n at 4n of tile row k), so
// element (i, n) of a C tile is activation i's exact int32 against row n over the tile's K.
// Every form builds its B tiles from the AVX-512 builds' VNNI panels of the same 16 rows
// (simd/wide512_panels*.h): a panel is a B tile row.
//
// Per form T:
//   Format               the SIMD format (kElems, kBytes, kActBytes, Block, decode, head)
//   kSteps, kStepBytes   tile K steps per weight block, bytes of activation per step
//   kDigits              1: B holds the weights as bytes, signed (tdpbssd) or unsigned (below);
//                        2: the scaled weights w' = q * scale (|w'| < 2^15) as an unsigned low
//                        digit (tdpbsud) and a high digit: S = C_lo + 2^kHiShift C_hi, in int32
//   kHiShift, kHiUnsigned  with two digits: the high digit's weight (8: w''s bytes) and whether
//                        it is unsigned (tdpbsud; the forms that split the scale instead,
//                        simd/tile_panel_forms.h) or signed (tdpbssd)
//   kUnsignedB           with one digit: B holds unsigned bytes (tdpbsud), else signed
//   kActQs               where the quants start in an activation block
//   kEpilogueBlocks      blocks per pass of the float epilogue (simd/tile_gemm.h)
//   Scales, build(p, B, scales)  the B tiles B[digit][step] of the 16 rows' blocks at p[0..15],
//                        and their float scales (and min weights), once per block
//   ActConst, act_const(act)  the activation block's constants: its d_a as a float (ActConst =
//                        float), or a struct with d and an integer offset term (Q3_K's panels);
//                        the driver tabulates them per call
//   combine(acc, w, lo, hi, act, d_a)  acc (16 rows of one activation) += the block, in the v2
//                        order: fma(S, d * d_a) [then fma(M, -(d_a) * dmin)]
#pragma once

#include <immintrin.h>

#include <cstring>

#include "simd/common.h"
#include "simd/formats_q8_0_act.h"
#include "simd/formats_q8_K_act.h"
#include "simd/rows16_layout.h"
#include "simd/tiles_shape.h"
#include "simd/wide512_panels.h"
#include "simd/wide512_panels_chunks.h"

namespace memra::simd::MEMRA_SIMD_NS {

constexpr int kTileGroup = kRows16;                               // output rows per B tile
constexpr int kTileBBytes = kTileRows * kTileRowBytes;            // a B tile of 16 groups (K = 64)
constexpr __mmask16 kAllRows = __mmask16(0xFFFF);

// The activation offset K of a Block32 format (its Act is ActOffset<K>).
template <class A>
struct OffsetOfAct;
template <int K>
struct OffsetOfAct<ActOffset<K>> {
    static constexpr int value = K;
};

// Q8_0, Q4_0, MXFP4 (simd/formats_q8_0_act.h Block32): B = the block's signed values, K = 32 in
// one step, no offset term. S = C. The 16 rows are decoded by the AVX-512 builds' VNNI panels
// (simd/wide512_panels.h: a transpose of the raw bytes, then the nibble / table work on all 16
// rows at once), whose panels w + K are a B tile's rows once K is taken off (exact in int8): one
// decoder of the 16-row layout for both rows paths.
template <class F>
struct Block32Tiles {
    using Format = F;
    static constexpr int kSteps = 1, kStepBytes = 32, kDigits = 1;
    static constexpr bool kUnsignedB = false;
    static constexpr size_t kActQs = 2;
    // Two blocks per epilogue pass, each activation's accumulator in a register across them: in
    // cache on the Zen 5 VM (tile ops stubbed, gemm32, 2 rounds) Q4_0 0.56 -> 0.42, Q8_0 0.63 ->
    // 0.50, MXFP4 0.70 -> 0.47 ms; four blocks 0.49, 0.55, 0.53 (twice the C ring).
    static constexpr int kEpilogueBlocks = 2;
    static constexpr int kOffset = OffsetOfAct<typename F::Act>::value;
    static_assert(Panel<F>::kOffset == kOffset, "the panels' offset is the activation side's");
    struct Scales {
        __m512 d;
    };
    static void build(const uint8_t *const p[kTileGroup], uint8_t *B, Scales &scales) {
        typename Panel<F>::Weights wb;
        Panel<F>::decode(p, wb);
        for (int g = 0; g < 8; ++g)
            _mm512_store_si512(B + kTileRowBytes * g, _mm512_sub_epi8(wb.P[g], _mm512_set1_epi8(char(kOffset))));
        scales.d = wb.d;
    }
    using ActConst = float;
    static float act_const(const uint8_t *act) { return fp16(act); }
    static void combine(__m512 &acc, const Scales &w, const int32_t *lo, const int32_t *, const uint8_t *, float d_a) {
        const __m512 S = _mm512_cvtepi32_ps(_mm512_load_si512(lo));
        acc = _mm512_fmadd_ps(S, _mm512_mul_ps(w.d, _mm512_set1_ps(d_a)), acc);
    }
};

// The min term of Q2_K, Q4_K, Q5_K: M = sum over int16 pairs p of (min_2p, min_2p+1) . (act's
// pair), exact in int32 (vpdpwssd: the pairs' products summed without saturation). Weights: the
// VNNI panels' 16 rows' pairs (lane n of pair p: row n), per block; per activation kPairs
// vpdpwssd over the 16 rows. ActConst: what the driver tabulates per (activation, block) with
// d_a, act_const(act) makes it and d_of(c) is d_a; pair(c, act, p) the activation's pair p.
struct NoMins {
    static constexpr int kPairs = 0;
    using ActConst = float;
    static float act_const(const uint8_t *act) { return f32(act); }
    static float d_of(float d) { return d; }
};
struct K4Mins {  // Q4_K, Q5_K: min j against T_j = bs[2j] + bs[2j + 1], tabulated with d_a
    static constexpr int kPairs = 4;
    struct ActConst {
        float d;
        int32_t T[4];  // int16 pairs (T_2k, T_2k+1)
    };
    static ActConst act_const(const uint8_t *act) {
        const ActK x = act_k(act);
        ActConst c;
        c.d = x.D;
        _mm_storeu_si128(reinterpret_cast<__m128i *>(c.T), x.T);
        return c;
    }
    static float d_of(const ActConst &c) { return c.d; }
    static __m512i pair(const ActConst &c, const uint8_t *, int p) {
        return _mm512_set1_epi32(c.T[p]);
    }
};
struct Q2KMins {  // Q2_K: min s against bs[s], the activation's bsums as they are
    static constexpr int kPairs = 8;
    using ActConst = float;
    static float act_const(const uint8_t *act) { return f32(act); }
    static float d_of(float d) { return d; }
    static __m512i pair(float, const uint8_t *act, int p) {
        int32_t v;
        std::memcpy(&v, act + q8_K_act::kBsumsOffset + 4 * p, 4);
        return _mm512_set1_epi32(v);
    }
};

// The super-block formats (simd/formats_q8_K_act.h SuperBlock): 4 steps of K = 64 (two chunks),
// the super-block's S accumulated in the C tiles, the scales inside the weights. The base of
// every super-block form: the B tiles are built from the formats' VNNI panels by the derived forms
// (Q2_K below, the others in simd/tile_panel_forms.h); here the shape, the scales and the float
// side. Mins: the min term's form (NoMins, K4Mins, Q2KMins). Digits: 1 where the scaled weights
// fit one unsigned byte (Q2_K, Q3_K), else 2. HiShift, HiUnsigned: the high digit's weight and
// sign (w''s bytes: 8, signed; the split-scale forms of simd/tile_panel_forms.h: 2^s, unsigned).
template <class F, class Mins = NoMins, int Digits = 2, int HiShift = 8, bool HiUnsigned = false>
struct SuperBlockTiles {
    using Format = F;
    static constexpr int kSteps = 4, kStepBytes = 64, kDigits = Digits, kHiShift = HiShift;
    static constexpr bool kUnsignedB = Digits == 1, kHiUnsigned = HiUnsigned;
    static constexpr size_t kActQs = q8_K_act::kQsOffset;
    // One block per epilogue pass: two were even in cache on the Zen 5 VM (tile ops stubbed).
    static constexpr int kEpilogueBlocks = 1;
    struct Scales {
        __m512 d, dmin;
        alignas(64) int32_t mins[Mins::kPairs > 0 ? 8 : 1][kTileGroup];  // pair p of row n
    };
    using ActConst = typename Mins::ActConst;
    static ActConst act_const(const uint8_t *act) { return Mins::act_const(act); }
    static void combine(__m512 &acc, const Scales &w, const int32_t *lo, const int32_t *hi, const uint8_t *act,
                        const ActConst &a) {
        const __m512i S = Digits == 1 ? _mm512_load_si512(lo)
                                      : _mm512_add_epi32(_mm512_load_si512(lo),
                                                         _mm512_slli_epi32(_mm512_load_si512(hi), HiShift));
        float_side(acc, w, S, act, a);
    }
    // The v2 float side of the super-block's exact S (and the rows' min term) for 16 rows.
    static void float_side(__m512 &acc, const Scales &w, __m512i S, const uint8_t *act,
                           const ActConst &a) {
        const float d_a = Mins::d_of(a);
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(S), _mm512_mul_ps(w.d, _mm512_set1_ps(d_a)), acc);
        if constexpr (Mins::kPairs > 0) {
            __m512i M = _mm512_setzero_si512();
            for (int p = 0; p < Mins::kPairs; ++p)
                M = _mm512_dpwssd_epi32(M, _mm512_load_si512(w.mins[p]), Mins::pair(a, act, p));
            const __m512 dmin_a = _mm512_mul_ps(w.dmin, _mm512_set1_ps(-d_a));
            acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(M), dmin_a, acc);
        }
    }
};

// Q2_K: the VNNI panels' raw-byte decode (simd/wide512_panels_chunks.h) holds the scaled weights
// q x sc (0..45) as one unsigned byte, chunk c's panel g at 64 (8c + g): exactly the B tiles of
// the 4 steps in order. One digit (tdpbsud), half the tile products of the two-digit form, and
// one decoder of Q2_K's 16-row layout for both rows paths.
struct Q2_KPanelTiles : SuperBlockTiles<Q2_K, Q2KMins, 1> {
    static void build(const uint8_t *const p[kTileGroup], uint8_t *B, Scales &scales) {
        typename Panel<Q2_K>::Weights wb;
        Panel<Q2_K>::decode(p, wb);
        for (int c = 0; c < 8; ++c)
            for (int g = 0; g < 8; ++g) _mm512_store_si512(B + kTileRowBytes * (8 * c + g), wb.P[c][g]);
        for (int k = 0; k < 8; ++k) _mm512_store_si512(scales.mins[k], wb.mins[k]);
        scales.d = wb.d, scales.dmin = wb.dmin;
    }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
