// The VNNI panels (simd/panel_driver.h) of Q2_K, Q3_K, IQ4_XS and IQ3_S, paired with Q8_K
// activations, written once over the panel vector V (16 rows on zmm in the AVX-512 builds,
// simd/wide512_panels_chunks.h; 8 rows on ymm in the 256-bit ones, simd/panels256_q8_K.h).
//
// The 256-bit builds' Q3_K and IQ3_S panels come from the formats' own per-row decoders
// (F::decode: the chunks of simd/formats_q8_K_act.h the token path dots) and a transpose of
// V::kRows rows (V::dense). The AVX-512 builds' Q3_K panels are the unscaled sub-block ones of
// Q6_K's shape (Q3KSub16Panel below, decoded from raw bytes: simd/wide512_panels_chunks.h says
// why), their IQ3_S panels replace the per-row grid gathers by vpermt2w lookups on 16 rows
// (simd/wide512_panels_iq3s.h). Q2_K and IQ4_XS have raw-byte decoders of their own (the rows'
// transposed bytes, decoded on all rows at once), because the per-row decode cost them at m = 4
// on AVX-512. The AMX tiles load every one of these 16-row panels (simd/tile_forms.h
// Q2_KPanelTiles, simd/tile_panel_forms.h).
//
// Two shapes, both exact in int32 and followed by the float side of the canonical order v2
// (formats spec §5.3: fmaf((float)S, D_a * d, acc), then for Q2_K fmaf((float)M, -(D_a) * dmin, acc)):
//   scaled (Q2_K, the 256-bit builds' Q3_K): the chunks' scaled weights w' = q * sc fit one
//     unsigned byte after an
//     offset K (Q2_K: 0..45, K = 0; Q3_K: -124..128, K = 124), so S = (64 dot4) - K * sum(a)
//     per activation, no multiplies; Q2_K's M is 8 vpdpwssd of the rows' mins (int16 pairs) x bsums.
//   sub-blocks (IQ4_XS, IQ3_S): |v * sc| needs two bytes, so the panels hold v + K (IQ4_XS K = 128:
//     1..241; IQ3_S K = 16: 1..31), each 32-element sub-block's 8 dot4 are multiplied by the
//     rows' sc_j (vpmulld, as Q4_K's); K * T_j (T_j = bs[2j] + bs[2j + 1]) is taken off at the
//     start of each sub-block's dot4 chain (SubBlockChunkPanel).
// Where V's dot4 is AVX2's (vpmaddubsw pairs saturate beyond 32767), only the panels whose bytes
// stay small take it (dot4_fits below): Q2_K (45) and IQ3_S (31); Q3_K (252) needs an exact dot4,
// and IQ4_XS holds its signed values for the sign trick there instead (|v| <= 127).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <utility>

#include "simd/panels_q8_K_act.h"

namespace memra::simd::MEMRA_SIMD_NS {

// Whether every dot4 pair of format F's panel bytes (u <= kMaxU) against activations
// (|a| <= 128) is exact on this build's dot4: 2 * kMaxU * 128 <= 32767 or the dot4 is exact.
constexpr bool dot4_fits(int max_u) { return Isa::kExactDot4 || 2 * max_u * 128 <= 32767; }

// Chunks C... of the row at p (head h) as panel bytes: v[C][r] = bytes(chunk C).
template <class F, class Bytes, size_t N, int... C>
inline void row_chunk_bytes(const uint8_t *p, const typename F::Head &h, __m256i (*v)[N], int r, Bytes bytes,
                            std::integer_sequence<int, C...>) {
    ((v[C][r] = bytes(F::template chunk<C>(p, h))), ...);
}

// The panels P[c][g] of the rows' blocks by the format's per-row decoder (F::Fields::head and
// F::chunk, the token path's): chunk c's 32 bytes of row r are bytes(chunk c), transposed
// (V::dense); h[r] gets row r's head. Each chunk goes straight to its panel bytes: storing the
// decoded blocks first (sign, magnitude and multipliers of 8 chunks, 768 bytes a row) and reading
// them back made Q3_K's avx512bf16 gemm 12-17% slower in cache at m = 4 / 8 / 32, IQ3_S's 2-7%.
template <class F, class V, class Bytes>
inline void chunk_panels(const uint8_t *const p[], typename V::I (*P)[8], typename F::Head h[], Bytes bytes) {
    alignas(32) __m256i v[8][V::kRows];
    for (int r = 0; r < V::kRows; ++r) {
        h[r] = F::Fields::head(p[r]);
        row_chunk_bytes<F>(p[r], h[r], v, r, bytes, std::make_integer_sequence<int, 8>());
    }
    for (int c = 0; c < 8; ++c) V::dense(v[c], P[c]);
}

// Q2_K, Q3_K: the scaled weights of chunk c plus K as unsigned bytes, panels P[c][g].
template <class V, int K, bool kMins>
struct ScaledChunkPanel {
    using I = typename V::I;
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
        alignas(64) I P[8][8];            // [chunk c][dword group g]: w' + K of values 32c + 4g .. + 3
        alignas(64) I mins[kMins ? 8 : 1];  // Q2_K: int16 pairs (min_2k, min_2k+1) of the rows
        typename V::F d, dmin;
    };
    static inline void apply(typename V::F *acc, const Weights &w, const Act *t, const uint8_t *xb, size_t xq_stride,
                             int32_t ms) {
        I S[kMaxM];
        scaled_subblock_sums<V, 8, 8, false>(S, w.P, nullptr, xb + q8_K_act::kQsOffset, xq_stride, ms);
        for (int32_t a = 0; a < ms; ++a) {
            const I s = K != 0 ? V::add_epi32(S[a], V::set1_epi32(t[a].start)) : S[a];
            acc[a] = V::fma(V::cvt(s), V::mul(w.d, V::set1_ps(t[a].D)), acc[a]);
            if constexpr (kMins) {
                const uint8_t *bs = xb + size_t(a) * xq_stride + q8_K_act::kBsumsOffset;
                I M = V::zero_i();
                for (int k = 0; k < 8; ++k) M = V::dpwssd(M, w.mins[k], V::bcast32(bs + 4 * k));
                acc[a] = V::fma(V::cvt(M), V::mul(w.dmin, V::set1_ps(-t[a].D)), acc[a]);
            }
        }
    }
};

// Q2_K (scales[16] | qs[64] | fp16 d | fp16 dmin) has a raw-byte decoder: its panels come straight
// from the rows' transposed bytes, 5x fewer operations than per-row decodes + the transpose, which
// at m = 4 cost more than the old path on AVX-512 (3.4-3.7 token calls against 2.7). Chunk 4i + g
// is bits 2g, 2g + 1 of qs[32i ..]; its values 16h .. 16h + 15 (panels 4h .. 4h + 3) are
// sub-block s = 2(4i + g) + h, scaled by one vpmullw with the rows' sc_s in both words of each
// lane (every byte q * sc <= 45: no carry into its neighbour).
// The 256-bit builds' Q2_K decode loops unrolled: left to itself GCC kept them as loops, ts[] on
// the stack and the scale shifts by a variable count, and unrolled avx2 ran gemm4 / gemm8 /
// gemm32 17-20% faster in cache (Zen 5 VM, 4 alternating rounds); the AVX-512 builds' were 5-7%
// slower unrolled, so they keep GCC's choice.
#ifdef MEMRA_SIMD_WIDE512
#define MEMRA_Q2K_PANEL_UNROLL
#else
#define MEMRA_Q2K_PANEL_UNROLL _Pragma("GCC unroll 4")
#endif

template <class V>
struct PanelOf<Q2_K, V> : ScaledChunkPanel<V, 0, true> {
    using I = typename V::I;
    using Weights = typename ScaledChunkPanel<V, 0, true>::Weights;
    static constexpr int kMaxU = 45;
    static inline void decode(const uint8_t *const p[], Weights &w) {
        const I m2 = V::set1_epi8(0x03), m4 = V::set1_epi8(0x0F), low4 = V::set1_epi32(0x0F);
        I ts[4];  // ts[k] lane r: row r's scale bytes 4k .. 4k + 3 (sub-blocks 4k + j)
        panel_transpose<V>(p, 0, ts);
        MEMRA_Q2K_PANEL_UNROLL
        for (int i = 0; i < 2; ++i)
            MEMRA_Q2K_PANEL_UNROLL
            for (int h = 0; h < 2; ++h) {
                I t[4];
                panel_transpose<V>(p, 16 + 32 * size_t(i) + 16 * size_t(h), t);
                MEMRA_Q2K_PANEL_UNROLL
                for (int g = 0; g < 4; ++g) {
                    const int s = 2 * (4 * i + g) + h;
                    const I sc = V::and_(V::srli_epi32(ts[s / 4], unsigned(8 * (s % 4))), low4);
                    const I sc16 = V::or_(sc, V::slli_epi32(sc, 16));
                    for (int k = 0; k < 4; ++k) {
                        const I q = V::and_(V::srli_epi16(t[k], unsigned(2 * g)), m2);
                        w.P[4 * i + g][4 * h + k] = V::mullo_epi16(q, sc16);
                    }
                }
            }
        // (min_2p, min_2p+1) as int16 pairs: the high nibbles of the scale bytes
        for (int k = 0; k < 4; ++k) byte_pairs16<V, false>(V::and_(V::srli4(ts[k]), m4), w.mins[2 * k], w.mins[2 * k + 1]);
        w.d = panel_fp16<V>(p, 80);
        w.dmin = panel_fp16<V>(p, 82);
    }
};

// Q3_K's panels from its per-row decode: the scaled weights (u - 4) * sc, -124..128, plus 124 as
// bytes. (A raw-byte decoder was slower on AVX-512: simd/wide512_panels_chunks.h.) Each byte's
// product is taken modulo 256 by vpmullw on the even and the odd bytes apart (a 16-bit product's
// low byte depends only on its operands' low bytes; int16 i of a chunk's multipliers is the scale
// of its bytes 2i and 2i + 1), so the per-row work stays on 32-byte vectors in every build.
inline __m256i q3k_chunk_bytes(const Q3_K::Chunk &k) {
    const __m256i v = _mm256_sub_epi8(k.u, _mm256_set1_epi8(char(Q3_K::kOffset))), sc = k.sc;  // u - 4: signed q
    const __m256i even = _mm256_and_si256(_mm256_mullo_epi16(v, sc), _mm256_set1_epi16(0x00FF));
    const __m256i odd = _mm256_slli_epi16(_mm256_mullo_epi16(_mm256_srli_epi16(v, 8), sc), 8);
    return _mm256_add_epi8(_mm256_or_si256(even, odd), _mm256_set1_epi8(char(124)));
}

template <class V>
struct PanelOf<Q3_K, V> : ScaledChunkPanel<V, 124, false> {
    using Weights = typename ScaledChunkPanel<V, 124, false>::Weights;
    static constexpr int kMaxU = 252;
    static inline void decode(const uint8_t *const p[], Weights &w) {
        typename Q3_K::Head h[V::kRows];
        chunk_panels<Q3_K, V>(p, w.P, h, q3k_chunk_bytes);
        w.d = panel_f32<V>([&](int r) { return h[r].d; });
    }
};

// Q3_K (hmask[32] | qs[64] | scales[12] | fp16 d) on the panels of 16 sub-blocks of 16 (Q6_K's
// apply, u = q + 4: 0..7), decoded from the rows' transposed raw bytes: the AVX-512 build's
// Panel<Q3_K> (simd/wide512_panels_chunks.h). Chunk C = 4 i + g (values 32 C + l) is bits 2g,
// 2g + 1 of qs[32 i + l] | bit C of hmask[l] as bit 2; its halves h (l = 16 h + t) are
// sub-blocks 2C + h. Against the scaled panels (per-row decode, (u - 4) * sc + 124 as bytes, then
// the 16 x 8 transpose: about 2000 operations per 16-row block, 77% of gemm4 in a perf record)
// this decode is about 500, and the apply pays 16 vpmulld + 8 vpdpwssd more per activation.
template <class V>
struct Q3KSub16Panel : Sub16Panel<V, 2, true> {
    using I = typename V::I;
    using Weights = typename Sub16Panel<V, 2, true>::Weights;
    static constexpr int kMaxU = 7;  // the largest panel byte
    // The 16 scale bytes sc_j (int8) of the row in each 128-bit lane of x (the row's bytes 94 ..
    // 109: qs[62..63], scales[12] = S, d): sc_j = (low4_j | high2_j << 4) - 32, low4_j the low
    // nibble of S[j] (j < 8) or the high nibble of S[j - 8], high2_j bits 2 (j / 4), + 1 of
    // S[8 + j % 4] (the token path's Q3_KFields::head on 4 rows at once).
    static inline I scale_bytes(I x) {
        const I a = V::shuffle_epi8(x, lanes16(2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5, 6, 7, 8, 9));
        const I lo_mask = lanes16(15, 15, 15, 15, 15, 15, 15, 15, 0, 0, 0, 0, 0, 0, 0, 0);
        const I hi_mask = lanes16(0, 0, 0, 0, 0, 0, 0, 0, 15, 15, 15, 15, 15, 15, 15, 15);
        const I low = V::or_(V::and_(a, lo_mask), V::and_(V::srli4(a), hi_mask));
        const I high_bytes = lanes16(10, 11, 12, 13, 10, 11, 12, 13, 10, 11, 12, 13, 10, 11, 12, 13);
        const I b = V::shuffle_epi8(x, high_bytes);  // S[8 .. 11] in every dword
        const I shifts = V::broadcast128(_mm_setr_epi32(0, 2, 4, 6));
        const I high = V::and_(V::srlv_epi32(b, shifts), V::set1_epi8(0x03));
        return V::sub_epi8(V::or_(low, V::slli_epi16(high, 4)), V::set1_epi8(32));
    }
    template <class... B>
    static inline I lanes16(B... b) { return V::broadcast128(_mm_setr_epi8(char(b)...)); }
    static inline void decode(const uint8_t *const p[], Weights &w) {
        const I m3 = V::set1_epi8(0x03), m4 = V::set1_epi8(0x04);
        I hm[2][4];  // hm[h][k] lane r: hmask bytes 16 h + 4 k .. + 3 of row r
        for (int h = 0; h < 2; ++h) panel_transpose<V>(p, 16 * size_t(h), hm[h]);
        for (int i = 0; i < 2; ++i)
            for (int h = 0; h < 2; ++h) {
                I t[4];
                panel_transpose<V>(p, 32 + 32 * size_t(i) + 16 * size_t(h), t);
                for (int g = 0; g < 4; ++g) {
                    const int c = 4 * i + g;
                    for (int k = 0; k < 4; ++k) {
                        const I lo = V::and_(g ? V::srli_epi16(t[k], unsigned(2 * g)) : t[k], m3);
                        const I x = hm[h][k];  // bit c to bit 2
                        const I hb = c > 2   ? V::srli_epi16(x, unsigned(c - 2))
                                     : c < 2 ? V::slli_epi16(x, unsigned(2 - c))
                                             : x;
                        w.P[2 * c + h][k] = V::or_(lo, V::and_(hb, m4));
                    }
                }
            }
        I z[4], t[4];  // t[k] byte b of row r: sc_{4k + b}
        for (int k = 0; k < 4; ++k) z[k] = scale_bytes(V::rows4(p, 94, k));
        panel_transpose_rows4<V>(z, t);
        Sub16Panel<V, 2, true>::scales(t, w);
        w.d = panel_fp16<V>(p, 108);
    }
};

// IQ4_XS, IQ3_S: signed chunks (sign, |v|) with one scale per 32-element chunk (their Head's
// scales16 is scales16_of8: int16 j = sc_j in its low 128 bits). K = 0: the panels hold the
// signed v and A their magnitudes, dotted by the sign trick (V::dot4_signed: AVX2's IQ4_XS).
// The offset is taken off inside the sums: each sub-block's dot4 chain starts at the activation's
// -K * T_j (T_j = bs[2j] + bs[2j + 1], in Act: tabulated once per call and activation; SumInit),
// so S needs no correction afterwards, against 4 vpdpwssd of the rows' (sc_2k, sc_2k+1) pairs x
// the T pairs + a shift + a subtract per activation and 16 rows before. Zen 5 VM, avx512bf16 in
// cache, 6 alternating rounds, min / median us: IQ4_XS gemm32 738 / 746 -> 721 / 731, IQ3_S (its
// m > 8 sums out of line, Panel<IQ3_S>) 974 / 984 -> 943 / 956; gemv, gemm4 and gemm8 even, and
// avx2 / avxvnni within +-4% (8 rounds). Small: those sums run at the multiply pipes' rate, and
// the 4 vpdpwssd were 4 of ~76 multiplies (docs/benchmarks.md, "IQ4_XS and IQ3_S rows").
template <class V, int K>
struct SubBlockChunkPanel {
    using I = typename V::I;
    struct Act {
        int32_t KT[8];  // -K * T_j
        float D;        // D_a
    };
    static inline Act act(const uint8_t *a) {
        const ActK x = act_k(a);
        Act t;
        const __m256i T = _mm256_cvtepi16_epi32(x.T);
        const __m256i KT = _mm256_mullo_epi32(T, _mm256_set1_epi32(-K));
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(t.KT), KT);
        t.D = x.D;
        return t;
    }
    struct Weights {
        alignas(64) I P[8][8];          // [sub-block j][dword group g]: v + K of values 32j + 4g .. + 3
        alignas(64) I A[K ? 1 : 8][8];  // K = 0: |v| of the same values
        I sc[8];                        // sc_j of the rows (int32)
        typename V::F d;
    };
    // The panels, scales and d of the rows from the format's per-row decode (IQ3_S).
    template <class F>
    static inline void decode_rows(const uint8_t *const p[], Weights &w) {
        typename F::Head h[V::kRows];
        chunk_panels<F, V>(p, w.P, h, [](const SChunk &k) {
            return _mm256_add_epi8(_mm256_sign_epi8(k.mag, k.sign), _mm256_set1_epi8(char(K)));
        });
        alignas(16) int16_t s16[V::kRows][8];
        const uint8_t *q[V::kRows];
        for (int r = 0; r < V::kRows; ++r) {
            _mm_store_si128(reinterpret_cast<__m128i *>(s16[r]), _mm256_castsi256_si128(h[r].scales16));
            q[r] = reinterpret_cast<const uint8_t *>(s16[r]);
        }
        I pairs[4];  // int16 pairs (sc_2k, sc_2k+1) of the rows
        panel_transpose<V>(q, 0, pairs);
        for (int k = 0; k < 4; ++k) {
            w.sc[2 * k] = V::srai_epi32(V::slli_epi32(pairs[k], 16), 16);
            w.sc[2 * k + 1] = V::srai_epi32(pairs[k], 16);
        }
        w.d = panel_f32<V>([&](int r) { return h[r].d; });
    }
    static inline void apply(typename V::F *acc, const Weights &w, const Act *t, const uint8_t *xb, size_t xq_stride,
                             int32_t ms) {
        if constexpr (K == 0) {  // signed panels: no offset to take off
            I S[kMaxM];
            scaled_subblock_sums<V, 8, 8, true, true>(S, w.P, w.sc, xb + q8_K_act::kQsOffset, xq_stride, ms, w.A);
            for (int32_t a = 0; a < ms; ++a) acc[a] = V::fma(V::cvt(S[a]), V::mul(w.d, V::set1_ps(t[a].D)), acc[a]);
        } else {
            const SumInit init{reinterpret_cast<const uint8_t *>(t->KT), sizeof(Act)};
            const auto term = [&](typename V::F &y, I s, int32_t a) {
                y = V::fma(V::cvt(s), V::mul(w.d, V::set1_ps(t[a].D)), y);
            };
            subblock_apply<V, 8, 8, false, true>(acc, w, xb, xq_stride, ms, term, init);
        }
    }
};

// IQ4_XS (fp16 d | u16 scales_h | scales_l[4] | qs[128]) has a raw-byte decoder as Q2_K does:
// sub-block sb's 16 bytes at 8 + 16 sb are a nibble panel (low nibbles: values 0-15, high: 16-31)
// through the value table + 128, and sc_sb = (nibble sb of scales_l | bits 2sb, 2sb + 1 of
// scales_h << 4) - 32 on all rows at once. Where the dot4 is not exact (AVX2) v + 128 (to 241)
// would saturate it: the panels hold the signed v (|v| <= 127) for the sign trick instead.
constexpr int kIq4xsPanelK = Isa::kExactDot4 ? 128 : 0;
template <class V>
struct PanelOf<IQ4_XS, V> : SubBlockChunkPanel<V, kIq4xsPanelK> {
    using I = typename V::I;
    using Weights = typename SubBlockChunkPanel<V, kIq4xsPanelK>::Weights;
    static constexpr int kMaxU = kIq4xsPanelK ? 241 : 127;
    static inline void decode(const uint8_t *const p[], Weights &w) {
        const I table = V::add_epi8(V::broadcast128(load128(kValuesIq4nl)), V::set1_epi8(char(kIq4xsPanelK)));
        for (int sb = 0; sb < 8; ++sb) {
            nibble_panel<V>(p, 8 + 16 * size_t(sb), w.P[sb]);
            for (int g = 0; g < 8; ++g) {
                w.P[sb][g] = V::shuffle_epi8(table, w.P[sb][g]);
                if constexpr (kIq4xsPanelK == 0) w.A[sb][g] = V::abs_epi8(w.P[sb][g]);
            }
        }
        I t[4];  // t[0] lane r: row r's d | scales_h, t[1]: its scales_l
        panel_transpose<V>(p, 0, t);
        const I sh = V::srli_epi32(t[0], 16);
        for (int j = 0; j < 8; ++j) {
            const I lo = V::and_(V::srli_epi32(t[1], unsigned(4 * j)), V::set1_epi32(0x0F));
            const I hi = V::and_(V::srli_epi32(sh, unsigned(2 * j)), V::set1_epi32(0x03));
            w.sc[j] = V::sub_epi32(V::or_(lo, V::slli_epi32(hi, 4)), V::set1_epi32(32));
        }
        w.d = panel_fp16<V>(p, 0);
    }
};

template <class V>
struct PanelOf<IQ3_S, V> : SubBlockChunkPanel<V, 16> {
    using Weights = typename SubBlockChunkPanel<V, 16>::Weights;
    static constexpr int kMaxU = 31;
    static inline void decode(const uint8_t *const p[], Weights &w) {
        SubBlockChunkPanel<V, 16>::template decode_rows<IQ3_S>(p, w);
    }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
