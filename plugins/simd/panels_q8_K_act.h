// The VNNI panels (simd/panel_driver.h) of Q4_K, Q5_K and Q6_K, paired with Q8_K activations,
// written once over the panel vector V (16 rows on zmm in the AVX-512 builds,
// simd/wide512_panels_q8_K.h; 8 rows on ymm in the 256-bit ones, simd/panels256_q8_K.h), and the
// pieces the other super-block panels share (simd/panels_chunks.h).
//
// Q4_K (fp16 d | fp16 dmin | scales[12] | qs[128]), formats spec §5.3: per super-block the exact
// S = sum_j sc_j * sum_{i in sub-block j} q_i a_i and M = sum_j m_j (bs[2j] + bs[2j+1]), then
// acc = fmaf((float)S, D_a * d, acc) and acc = fmaf((float)M, -(D_a * dmin), acc). On panels:
// sub-block j (32 values, q unsigned 0..15: no offset) is 8 dot4 per activation into the rows'
// sum, multiplied by the rows' sc_j (vpmulld) and added to S; M is 4 vpdpwssd (or vpmaddwd +
// vpaddd) of the rows' mins as int16 pairs against the activation's T pairs. The sub-block loop
// runs outside the activation loop, so its 8 panels stay in registers for all m. Q5_K is the same
// with q 0..31, the fifth bit of each value from qh. Every dot4 pair stays within vpmaddubsw's
// int16 range where V's dot4 is AVX2's: u <= 63 (Q6_K) against |a| <= 128, 2 * 63 * 128 < 32768.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "simd/formats_q8_K_act.h"
#include "simd/panel_driver.h"

namespace memra::simd::MEMRA_SIMD_NS {

// The activations of scaled_subblock_sums taken together (V::kSumGroup: 4 on zmm; the 256-bit
// builds take none) and the independent dot4 chains per activation and sub-block (even and
// odd dword groups): the sums of a group stay in registers across the sub-blocks, and the 8 dot4
// of a sub-block are two chains of 4, not one of 8. With one chain per activation threaded
// through a stack array S[a] over all sub-blocks (64 dependent vpdpbusd per Q2_K block), small m
// waited on the dot4 latency: the rows call at m = 4 / 8 (plugins/simd/README.md).
// Where each sub-block's dot4 chain starts, per activation: at zero (kInit false), or at the
// int32 at p + a * stride + 4 j (bytes) for activation a and sub-block j: IQ4_XS's and IQ3_S's
// -K * T_j, so the panels' offset K comes off inside the chain, by the broadcast that starts it.
struct SumInit {
    const uint8_t *p = nullptr;
    size_t stride = 0;
    SumInit at(int32_t a) const { return {p ? p + size_t(a) * stride : nullptr, stride}; }
    // kOn at compile time: the sums without an offset (every other format) keep their zeroed
    // chains, with no test of p in their loops.
    template <class V, bool kOn>
    typename V::I start(int32_t a, int j) const {
        if constexpr (kOn) return V::bcast32(p + size_t(a) * stride + 4 * size_t(j));
        else return V::zero_i();
    }
};

template <class V, int A, int NSub, int G, bool kScaled, bool kSigned, bool kInit>
inline void subblock_sums_group(typename V::I *S, const typename V::I (*P)[G], const typename V::I *sc,
                                const uint8_t *qs, size_t xq_stride, const typename V::I (*Abs)[G],
                                SumInit init) {
    using I = typename V::I;
    constexpr int kChains = G >= 2 ? V::kSumChains : 1;
    I sum[A];
    for (int j = 0; j < NSub; ++j) {
        I p[G];
        for (int g = 0; g < G; ++g) p[g] = kSigned ? Abs[j][g] : P[j][g];
        for (int a = 0; a < A; ++a) {
            const uint8_t *x = qs + size_t(a) * xq_stride + 4 * G * j;
            I s[kChains];
            for (int c = 0; c < kChains; ++c)
                s[c] = c == 0 ? init.start<V, kInit>(a, j) : V::zero_i();
            for (int g = 0; g < G; ++g) {
                I &t = s[g % kChains];
                if constexpr (kSigned) t = V::dot4_signed(t, p[g], P[j][g], V::bcast32(x + 4 * g));
                else t = V::dot4(t, p[g], V::bcast32(x + 4 * g));
            }
            for (int c = 1; c < kChains; ++c) s[0] = V::add_epi32(s[0], s[c]);
            if constexpr (kScaled) s[0] = V::mullo_epi32(s[0], sc[j]);
            sum[a] = j == 0 ? s[0] : V::add_epi32(sum[a], s[0]);
        }
    }
    for (int a = 0; a < A; ++a) S[a] = sum[a];
}

// scaled_subblock_sums of ms <= kGroupedSumsMaxM activations in groups of V::kSumGroup.
constexpr int32_t kGroupedSumsMaxM = 8;
template <class V, int NSub, int G, bool kScaled, bool kSigned, bool kInit>
inline void grouped_subblock_sums(typename V::I *S, const typename V::I (*P)[G], const typename V::I *sc,
                                  const uint8_t *qs, size_t xq_stride, int32_t ms,
                                  const typename V::I (*Abs)[G], SumInit init) {
    constexpr int kGroup = V::kSumGroup;
    int32_t a = 0;
    for (; a + kGroup <= ms; a += kGroup)
        subblock_sums_group<V, kGroup, NSub, G, kScaled, kSigned, kInit>(
            S + a, P, sc, qs + size_t(a) * xq_stride, xq_stride, Abs, init.at(a));
    const uint8_t *x = qs + size_t(a) * xq_stride;
    switch (ms - a) {  // the last activations, fewer than a group
        case 3:
            if constexpr (kGroup > 3)
                subblock_sums_group<V, 3, NSub, G, kScaled, kSigned, kInit>(S + a, P, sc, x,
                                                                            xq_stride, Abs, init.at(a));
            break;
        case 2:
            if constexpr (kGroup > 2)
                subblock_sums_group<V, 2, NSub, G, kScaled, kSigned, kInit>(S + a, P, sc, x,
                                                                            xq_stride, Abs, init.at(a));
            break;
        case 1:
            if constexpr (kGroup > 1)
                subblock_sums_group<V, 1, NSub, G, kScaled, kSigned, kInit>(S + a, P, sc, x,
                                                                            xq_stride, Abs, init.at(a));
            break;
        default:
            break;
    }
}

// S[a] = sum_j sc[j] * (the rows' dot of sub-block j against activation a's values), exact in
// int32 (any association of the integer sums is), for the NSub sub-blocks of G dword groups each
// (P[j][g]: values E j + 4g .. + 3, E = 4G). Up to kGroupedSumsMaxM activations in groups where
// V::kSumGroup > 0 (grouped_subblock_sums); more, or without groups, with the sub-block loop
// outside the activation loop, so a sub-block's panels stay in registers for all m and each
// activation's sum runs through S[a]: at m = 32 the groups were no faster (Q3_K from DRAM
// 6.1-6.9 token calls against 5.1-5.2). Zen 5 VM, avx512bf16 in cache, groups against the S[a]
// loop at m = 4: Q2_K 0.25 / 0.31 ms, Q3_K 0.48 / 0.55, Q6_K 0.33 / 0.36, IQ4_XS 0.24 / 0.26,
// Q4_K 0.27 / 0.28; at m = 8 Q2_K and Q6_K 8% faster, the others even.
// Past the groups the sub-blocks go V::kPassPanels / G at a time (AVX-512: two of Q2_K's to
// IQ4_XS's 8 panels, four of Q6_K's 4; 16 zmm of panels): per activation one S[a] load and store
// per pass instead of per sub-block, and that many independent dot4 chains. In cache on the Zen 5
// VM (4 alternating rounds, min) gemm32 Q2_K 0.756 -> 0.708 ms, Q6_K 0.881 -> 0.830, IQ4_XS
// 0.739 -> 0.725, the others even; the 256-bit builds keep one (16 ymm in all).
// Past the groups each dot4 takes its activation dword as the instruction's broadcast operand
// (V::dot4_bcast): in cache on the Zen 5 VM gemm32 2-4% faster (IQ4_XS 0.79 -> 0.76 ms, Q2_K,
// Q6_K); in the groups it was 5-6% slower at m = 4 / 8 (Q6_K), so they keep vpbroadcastd.
// kScaled = false: the panels hold weights already scaled (sc unused), S[a] is their plain dot.
// kSigned: the panels hold SIGNED bytes and Abs their magnitudes, dotted by V::dot4_signed (Abs
// in registers, P read from memory).
// pairs (kPaired, where every sub-block's sum fits int16 and V pairs them, V::kPairSums): the
// rows' (sc_2k, sc_2k+1) as int16 pairs; past the groups two sub-blocks' sums are then packed
// into int16 pairs and scaled by one vpdpwssd, not two vpmulld.
template <class V, int NSub, int G, bool kScaled = true, bool kSigned = false, bool kPaired = false,
          bool kInit = false>
inline void scaled_subblock_sums(typename V::I *S, const typename V::I (*P)[G], const typename V::I *sc,
                                 const uint8_t *qs, size_t xq_stride, int32_t ms,
                                 const typename V::I (*Abs)[G] = nullptr,
                                 const typename V::I *pairs = nullptr, SumInit init = {}) {
    using I = typename V::I;
    if constexpr (V::kSumGroup > 0)
        if (ms <= kGroupedSumsMaxM)
            return grouped_subblock_sums<V, NSub, G, kScaled, kSigned, kInit>(
                S, P, sc, qs, xq_stride, ms, Abs, init);
    constexpr int J = V::kPassPanels / G > 1 && NSub % (V::kPassPanels / G) == 0 ? V::kPassPanels / G : 1;
    constexpr bool kPairs = kPaired && kScaled && J % 2 == 0;
    for (int j0 = 0; j0 < NSub; j0 += J) {
        I p[J][G], m[J];  // the pass's panels and multipliers in registers (S[a]'s stores may alias sc)
        for (int jj = 0; jj < J; ++jj) {
            for (int g = 0; g < G; ++g) p[jj][g] = kSigned ? Abs[j0 + jj][g] : P[j0 + jj][g];
            if constexpr (kPairs) m[jj] = pairs[(j0 + jj) / 2];
            else if constexpr (kScaled) m[jj] = sc[j0 + jj];
        }
        for (int32_t a = 0; a < ms; ++a) {
            const uint8_t *x = qs + size_t(a) * xq_stride + 4 * G * j0;
            I s[J];
            for (int jj = 0; jj < J; ++jj) {
                if constexpr (kScaled) s[jj] = init.start<V, kInit>(a, j0 + jj);
                else s[jj] = j0 + jj == 0 || jj > 0 ? V::zero_i() : S[a];
                for (int g = 0; g < G; ++g) {
                    if constexpr (kSigned) s[jj] = V::dot4_signed(s[jj], p[jj][g], P[j0 + jj][g], V::bcast32(x + 4 * (G * jj + g)));
                    else s[jj] = V::dot4_bcast(s[jj], p[jj][g], x + 4 * (G * jj + g));
                }
                if constexpr (kPairs) {
                    if (jj % 2) {
                        const I both = V::pack_lo16(s[jj - 1], s[jj]);
                        s[jj - 1] = V::dpwssd(V::zero_i(), both, m[jj]);
                    }
                } else if constexpr (kScaled) {
                    s[jj] = V::mullo_epi32(s[jj], m[jj]);
                }
            }
            for (int jj = 1; jj < J; ++jj)
                if (!kPairs || jj % 2 == 0) s[0] = V::add_epi32(s[0], s[jj]);
            S[a] = kScaled && j0 > 0 ? V::add_epi32(S[a], s[0]) : s[0];
        }
    }
}

// A sub-block panel's apply: the exact S of every activation (scaled_subblock_sums over the
// weights' P and sc), then term(acc[a], S[a], a), the format's integer rest and float side, in
// activation order.
template <class V, int NSub, int G, bool kPaired = false, bool kInit = false, class Weights,
          class Term>
inline void subblock_apply(typename V::F *acc, const Weights &w, const uint8_t *xb, size_t xq_stride, int32_t ms,
                           Term term, SumInit init = {}) {
    typename V::I S[kMaxM];
    const uint8_t *qs = xb + q8_K_act::kQsOffset;
    if constexpr (kPaired)
        scaled_subblock_sums<V, NSub, G, true, false, true>(S, w.P, w.sc, qs, xq_stride, ms, nullptr,
                                                            w.pairs);
    else
        scaled_subblock_sums<V, NSub, G, true, false, false, kInit>(S, w.P, w.sc, qs, xq_stride, ms,
                                                                  nullptr, nullptr, init);
    for (int32_t a = 0; a < ms; ++a) term(acc[a], S[a], a);
}

// Bytes (0, 1) and (2, 3) of every dword of t as int16 pairs, zero-extended (Signed = false) or
// sign-extended: vpshufb puts each byte in the low (or, for the sign, the high) byte of its
// 16-bit half; it indexes within 128-bit lanes, where dword i starts at byte 4i.
template <class V, bool Signed>
inline void byte_pairs16(typename V::I t, typename V::I &p01, typename V::I &p23) {
    if constexpr (Signed) {
        p01 = V::srai_epi16(V::shuffle_epi8(t, V::broadcast128(_mm_set_epi32(int32_t(0x0D800C80), int32_t(0x09800880),
                                                                              int32_t(0x05800480), int32_t(0x01800080)))),
                            8);
        p23 = V::srai_epi16(V::shuffle_epi8(t, V::broadcast128(_mm_set_epi32(int32_t(0x0F800E80), int32_t(0x0B800A80),
                                                                              int32_t(0x07800680), int32_t(0x03800280)))),
                            8);
    } else {
        p01 = V::shuffle_epi8(t, V::broadcast128(_mm_set_epi32(int32_t(0x800D800C), int32_t(0x80098008),
                                                               int32_t(0x80058004), int32_t(0x80018000))));
        p23 = V::shuffle_epi8(t, V::broadcast128(_mm_set_epi32(int32_t(0x800F800E), int32_t(0x800B800A),
                                                               int32_t(0x80078006), int32_t(0x80038002))));
    }
}

// Bit `bit` of every byte of x moved to bit 4 (Q5_K's fifth bit of sub-block `bit`).
template <class V>
inline typename V::I bit_to_4(typename V::I x, int bit) {
    const typename V::I m = V::set1_epi8(0x10);
    if (bit < 4) return V::and_(V::slli_epi16(x, unsigned(4 - bit)), m);
    if (bit > 4) return V::and_(V::srli_epi16(x, unsigned(bit - 4)), m);
    return V::and_(x, m);
}

// The activation side of the panels whose term per 32-element sub-block j pairs with T_j: D_a
// and the int16 pairs (T_2k, T_2k+1), T_j = bs[2j] + bs[2j + 1] (Q4_K's and Q5_K's mins, IQ4_XS's
// and IQ3_S's offsets).
struct TPairsAct {
    struct Act {
        int32_t T[4];  // int16 pairs (T_2k, T_2k+1)
        float D;       // D_a
    };
    static inline Act act(const uint8_t *a) {
        const ActK x = act_k(a);
        Act t;
        _mm_storeu_si128(reinterpret_cast<__m128i *>(t.T), x.T);
        t.D = x.D;
        return t;
    }
};

// Q4_K and Q5_K (fp16 d | fp16 dmin | scales[12] | [Q5_K: qh[32]] | qs[128] at kQs).
template <class V, size_t kQs, bool kHighBit>
struct K4Panel : TPairsAct {
    using I = typename V::I;
    static constexpr int kMaxU = kHighBit ? 31 : 15;  // the largest panel byte
    struct Weights {
        I P[8][8];  // [sub-block j][dword group g]: q of values 32j + 4g .. + 3
        I sc[8];    // sc_j of the rows (int32)
        I mins[4];  // int16 pairs (m_2k, m_2k+1) of the rows
        typename V::F d, dmin;
    };
    static inline void decode(const uint8_t *const p[], Weights &w) {
        // qs piece k (16 bytes at kQs + 16k) holds values 32(2i) + 16h + t (lo nibbles) and
        // 32(2i + 1) + 16h + t (hi nibbles), i = k / 2, h = k % 2; Q5_K's qh[16h + t] holds their
        // fifth bits, bit j for sub-block j.
        const I m4 = V::set1_epi8(0x0F);
        I qh[2][4];
        if constexpr (kHighBit)
            for (int h = 0; h < 2; ++h) panel_transpose<V>(p, 16 + 16 * size_t(h), qh[h]);
        for (int k = 0; k < 8; ++k) {
            I t[4];
            panel_transpose<V>(p, kQs + 16 * size_t(k), t);
            const int j = 2 * (k / 2), h = k % 2;
            for (int g = 0; g < 4; ++g) {
                I lo = V::and_(t[g], m4), hi = V::and_(V::srli4(t[g]), m4);
                if constexpr (kHighBit) {
                    lo = V::or_(lo, bit_to_4<V>(qh[h][g], j));
                    hi = V::or_(hi, bit_to_4<V>(qh[h][g], j + 1));
                }
                w.P[j][4 * h + g] = lo;
                w.P[j + 1][4 * h + g] = hi;
            }
        }
        // Scales and mins of the rows unpacked (bytes 0-7 scales, 8-15 mins) in the transpose's
        // row lanes, 4 (zmm) or 2 (ymm) rows per unpack, then transposed: one row at a time,
        // stored and loaded again, cost 3-5% at m = 4 in cache (Zen 5 VM, 3 alternating rounds:
        // avx512bf16 Q4_K gemm4 0.209-0.211 -> 0.200-0.202 ms, Q5_K 0.237-0.253 -> 0.232-0.237;
        // avxvnni Q4_K 0.340-0.349 -> 0.329-0.343, Q5_K 0.397-0.401 -> 0.378-0.385).
        I z[4], t[4];  // t[0]: scales 0-3 of each row, t[1]: 4-7, t[2]: mins 0-3, t[3]: mins 4-7
        for (int k = 0; k < 4; ++k) z[k] = k4_scales_mins_lanes(V::rows4(p, 4, k));
        panel_transpose_rows4<V>(z, t);
        for (int j = 0; j < 8; ++j) w.sc[j] = V::and_(V::srli_epi32(t[j / 4], unsigned(8 * (j % 4))), V::set1_epi32(0xFF));
        // (m_2k, m_2k+1) as int16 pairs
        for (int h = 0; h < 2; ++h) byte_pairs16<V, false>(t[2 + h], w.mins[2 * h], w.mins[2 * h + 1]);
        w.d = panel_fp16<V>(p, 0);
        w.dmin = panel_fp16<V>(p, 2);
    }
    static inline void apply(typename V::F *acc, const Weights &w, const Act *t, const uint8_t *xb, size_t xq_stride,
                             int32_t ms) {
        subblock_apply<V, 8, 8>(acc, w, xb, xq_stride, ms, [&](typename V::F &y, I S, int32_t a) {
            I M = V::zero_i();
            for (int k = 0; k < 4; ++k) M = V::dpwssd(M, w.mins[k], V::set1_epi32(t[a].T[k]));
            y = V::fma(V::cvt(S), V::mul(w.d, V::set1_ps(t[a].D)), y);
            y = V::fma(V::cvt(M), V::mul(w.dmin, V::set1_ps(-t[a].D)), y);
        });
    }
};

template <class V>
struct PanelOf<Q4_K, V> : K4Panel<V, 16, false> {};
template <class V>
struct PanelOf<Q5_K, V> : K4Panel<V, 48, true> {};

// The panels of 16 sub-blocks of 16 values with signed int8 scales and one term (Q6_K, Q3_K),
// formats spec §5.3: per super-block S = sum_s sc_s * sum_{i in s} q_i a_i, then
// acc = fmaf((float)S, D_a * d, acc). On panels the quants are the unsigned u = q + 2^kShift:
// 4 dot4 per sub-block, times the rows' sc_s, and the offset 2^kShift * sum_s sc_s bs[s] is 8
// vpdpwssd of the rows' scales as int16 pairs against the activation's bsums pairs, read straight
// from the Q8_K block, exact in int32 (the token path's Q6_KFields::ints does the same).
// kPaired: every sub-block's sum fits int16 (Q3_K: 16 x 7 x 128 < 32768), so scaled_subblock_sums
// may scale two at once.
template <class V, int kShift, bool kPaired = false>
struct Sub16Panel {
    using I = typename V::I;
    struct Act {
        float D;  // D_a
    };
    static inline Act act(const uint8_t *a) { return {f32(a)}; }
    struct Weights {
        I P[16][4];  // [sub-block s][dword group g]: u of values 16 s + 4 g .. + 3
        I sc[16];    // sc_s of the rows (int32)
        I pairs[8];  // int16 pairs (sc_2k, sc_2k+1) of the rows
        typename V::F d;
    };
    // sc and pairs from the rows' scale bytes (t[k] byte b of row r: sc_{4k + b}, int8)
    static inline void scales(const I t[4], Weights &w) {
        for (int sb = 0; sb < 16; ++sb)
            w.sc[sb] = V::srai_epi32(V::slli_epi32(t[sb / 4], unsigned(24 - 8 * (sb % 4))), 24);
        for (int k = 0; k < 4; ++k) byte_pairs16<V, true>(t[k], w.pairs[2 * k], w.pairs[2 * k + 1]);
    }
    static inline void apply(typename V::F *acc, const Weights &w, const Act *t, const uint8_t *xb,
                             size_t xq_stride, int32_t ms) {
        constexpr bool kPairs = kPaired && V::kPairSums;
        subblock_apply<V, 16, 4, kPairs>(acc, w, xb, xq_stride, ms, [&](typename V::F &y, I S,
                                                                          int32_t a) {
            const uint8_t *bs = xb + size_t(a) * xq_stride + q8_K_act::kBsumsOffset;
            I O = V::zero_i();
            for (int k = 0; k < 8; ++k) O = V::dpwssd(O, w.pairs[k], V::bcast32(bs + 4 * k));
            const I s = V::sub_epi32(S, V::slli_epi32(O, kShift));
            y = V::fma(V::cvt(s), V::mul(w.d, V::set1_ps(t[a].D)), y);
        });
    }
};

// Q6_K (ql[128] | qh[64] | int8 scales[16] | fp16 d): u = q + 32 (0..63).
template <class V>
struct PanelOf<Q6_K, V> : Sub16Panel<V, 5> {
    using I = typename V::I;
    using Weights = typename Sub16Panel<V, 5>::Weights;
    static constexpr int kMaxU = 63;  // the largest panel byte
    static inline void decode(const uint8_t *const p[], Weights &w) {
        // Chunk C = 4 i + g (values 128 i + 32 g + l): the low 4 bits from nibble g / 2 of
        // ql[64 i + 32 (g % 2) + l], bits 4-5 from bits 2g, 2g + 1 of qh[32 i + l]; its halves
        // h (l = 16 h + t) are sub-blocks 2C + h.
        const I m4 = V::set1_epi8(0x0F), m30 = V::set1_epi8(0x30);
        for (int i = 0; i < 2; ++i)
            for (int h = 0; h < 2; ++h) {
                I qh[4];
                panel_transpose<V>(p, 128 + 32 * size_t(i) + 16 * size_t(h), qh);
                for (int odd = 0; odd < 2; ++odd) {
                    I ql[4];
                    panel_transpose<V>(p, 64 * size_t(i) + 32 * size_t(odd) + 16 * size_t(h), ql);
                    for (int nib = 0; nib < 2; ++nib) {
                        const int g = odd + 2 * nib, sb = 2 * (4 * i + g) + h;
                        for (int k = 0; k < 4; ++k) {
                            const I lo = nib ? V::and_(V::srli4(ql[k]), m4) : V::and_(ql[k], m4);
                            I hi;  // bits 2g, 2g + 1 to bits 4, 5 of each byte
                            if (g == 0) hi = V::slli_epi16(qh[k], 4);
                            else if (g == 1) hi = V::slli_epi16(qh[k], 2);
                            else if (g == 2) hi = qh[k];
                            else hi = V::srli_epi16(qh[k], 2);
                            w.P[sb][k] = V::or_(lo, V::and_(hi, m30));
                        }
                    }
                }
            }
        I t[4];  // t[k] byte b of row r: sc_{4k + b}
        panel_transpose<V>(p, 192, t);
        Sub16Panel<V, 5>::scales(t, w);
        w.d = panel_fp16<V>(p, 208);
    }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
