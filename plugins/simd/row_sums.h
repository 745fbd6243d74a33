// The float side of the canonical order v2 (formats spec §5.3) with lanes over OUTPUT rows: the
// int lanes of R rows' blocks (each row's eight int32 lanes, split any way: their total is the
// block's exact integer) reduced by an integer hadd tree into one vector of per-row block sums,
// then one conversion and one fma per term with the vector of per-row scales. Lane r of the
// accumulator is exactly the scalar chain of row r: fmaf((float)S_r, D_r, acc_r) per block. The
// cost per block is one cvt + one fma (+ one mul for D) per R rows where version 1 paid them per
// row and lane.
//   R = 1: plain floats, the super-block formats' token path (one block, or two consecutive
//          blocks of the row sharing one tree: combine_pair)
//   R = 4: an __m128, R = 8: an __m256 (the 32-element formats, the rows path, the tile builds)
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "isa_select.h"

namespace memra::simd::MEMRA_SIMD_NS {

template <int R>
struct RowVec {
    static_assert(R == 4, "rows of an __m128");
    using F = __m128;
    using I = __m128i;
    static F load(const float *p) { return _mm_loadu_ps(p); }
    static void store(float *p, F v) { _mm_storeu_ps(p, v); }
    static F zero() { return _mm_setzero_ps(); }
    static F set1(float v) { return _mm_set1_ps(v); }
    static F cvt(I v) { return _mm_cvtepi32_ps(v); }
    static F mul(F a, F b) { return _mm_mul_ps(a, b); }
    // acc + S * D, one rounding per lane (scalar/block_order.h fma_block)
    static F fma(F S, F D, F acc) { return _mm_fmadd_ps(S, D, acc); }
    // One float per row (R of them) as a vector.
    template <class Get>
    static F gather(Get get) {
        return _mm_setr_ps(get(0), get(1), get(2), get(3));
    }
};
// One row: plain floats (vmulss, vfmadd231ss on scalars). An __m128 with only lane 0 in use
// cost a vinsertps or blend per operand to zero the other lanes (_mm_set_ss), shuffles beside
// the block's integer reduction, once per (row, super-block) on the super-block formats' token
// path: plain floats made it 4-7% faster on Q2_K, Q4_K, Q5_K (AMD Zen 5 VM, memra-bench-micro
// gemv in cache, best of 5 alternating runs, avx512bf16 and avx2, 2026-12-05); same bits.
template <>
struct RowVec<1> {
    using F = float;
    using I = __m128i;
    static F load(const float *p) { return *p; }
    static void store(float *p, F v) { *p = v; }
    static F zero() { return 0.0f; }
    static F set1(float v) { return v; }
    static F cvt(I v) { return _mm_cvtss_f32(_mm_cvtepi32_ps(v)); }  // lane 0
    static F mul(F a, F b) { return a * b; }
    static F fma(F S, F D, F acc) { return __builtin_fmaf(S, D, acc); }  // one rounding (vfmadd)
    template <class Get>
    static F gather(Get get) {
        return get(0);
    }
};
template <>
struct RowVec<8> {
    using F = __m256;
    using I = __m256i;
    static F load(const float *p) { return _mm256_loadu_ps(p); }
    static void store(float *p, F v) { _mm256_storeu_ps(p, v); }
    static F zero() { return _mm256_setzero_ps(); }
    static F set1(float v) { return _mm256_set1_ps(v); }
    static F cvt(I v) { return _mm256_cvtepi32_ps(v); }
    static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
    static F fma(F S, F D, F acc) { return _mm256_fmadd_ps(S, D, acc); }
    template <class Get>
    static F gather(Get get) {
        return _mm256_setr_ps(get(0), get(1), get(2), get(3), get(4), get(5), get(6), get(7));
    }
};

// Four rows' lanes: 128-bit half h of the result holds [row 0, 1, 2, 3] sums of their halves h.
inline __m256i hadd_tree4(__m256i a, __m256i b, __m256i c, __m256i d) {
    return _mm256_hadd_epi32(_mm256_hadd_epi32(a, b), _mm256_hadd_epi32(c, d));
}
inline __m128i hsum_epi32(__m128i s) {  // the total in every lane
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    return _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
}

// Lane K of v, by the one shuffle that brings it to lane 0 (none for lane 0).
template <int K>
inline float lane(__m128 v) {
    if constexpr (K == 0) return _mm_cvtss_f32(v);
    else if constexpr (K == 1) return _mm_cvtss_f32(_mm_movehdup_ps(v));
    else if constexpr (K == 2) return _mm_cvtss_f32(_mm_movehl_ps(v, v));
    else return _mm_cvtss_f32(_mm_shuffle_ps(v, v, 0xFF));
}

// Each row's total of its eight lanes, as one vector over the R rows.
template <int R>
inline typename RowVec<R>::I row_sums(const __m256i *v) {
    if constexpr (R == 1) {
        return hsum_epi32(_mm_add_epi32(_mm256_castsi256_si128(v[0]), _mm256_extracti128_si256(v[0], 1)));
    } else if constexpr (R == 4) {
        const __m256i h = hadd_tree4(v[0], v[1], v[2], v[3]);
        return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
    } else {
        const __m256i x = hadd_tree4(v[0], v[1], v[2], v[3]), y = hadd_tree4(v[4], v[5], v[6], v[7]);
        return _mm256_add_epi32(_mm256_permute2x128_si256(x, y, 0x20), _mm256_permute2x128_si256(x, y, 0x31));
    }
}

// Each row's totals of lanes 0-3 (lo) and 4-7 (hi) separately (NVFP4: two 16-element sub-blocks
// per 256-bit register), each as one vector over the R rows.
template <int R>
inline void row_half_sums(const __m256i *v, typename RowVec<R>::I &lo, typename RowVec<R>::I &hi) {
    if constexpr (R == 1) {
        lo = hsum_epi32(_mm256_castsi256_si128(v[0]));
        hi = hsum_epi32(_mm256_extracti128_si256(v[0], 1));
    } else if constexpr (R == 4) {
        const __m256i h = hadd_tree4(v[0], v[1], v[2], v[3]);
        lo = _mm256_castsi256_si128(h), hi = _mm256_extracti128_si256(h, 1);
    } else {
        const __m256i x = hadd_tree4(v[0], v[1], v[2], v[3]), y = hadd_tree4(v[4], v[5], v[6], v[7]);
        lo = _mm256_permute2x128_si256(x, y, 0x20), hi = _mm256_permute2x128_si256(x, y, 0x31);
    }
}

// The int side of one (row, activation, block): lanes whose total is the block's S and, where a
// format has a second term (the mins' M; NVFP4's second half), its lanes in m.
struct Ints {
    __m256i s, m;
};

// The float sides, by what a block contributes; a format derives from one and has a Head with
// the fields named here (the weight block's f32 scales, decoded once per block and row) and an
// Act with its activation scale. Scales<R> is built once per block for R rows (on the rows path
// once for all m activations).
//
// One term: acc = fma(S, d * d_a) (Q4_0, Q8_0, MXFP4 with d_w, d_w, e8m0_half(e); Q3_K, Q6_K with
// D_a * d; IQ3_S, IQ4_XS with d * D_a: one IEEE product, commutative, whatever the operand order).
template <class Act>
struct OneTerm {
    template <int R>
    struct Scales {
        typename RowVec<R>::F d;
    };
    template <int R, class Head>
    static inline Scales<R> scales(const Head *const h[R]) {
        return {RowVec<R>::gather([&](int r) { return h[r]->d; })};
    }
    template <int R>
    static inline void combine(typename RowVec<R>::F &acc, const Scales<R> &w, const Ints *ints, const Act &x) {
        using V = RowVec<R>;
        __m256i s[R];
        for (int r = 0; r < R; ++r) s[r] = ints[r].s;
        acc = V::fma(V::cvt(row_sums<R>(s)), V::mul(w.d, V::set1(Act::scale(x))), acc);
    }
    // Two consecutive blocks of one row (the super-block formats' token path): one tree for
    // both S, [S0 S0 S1 S1], then the row's two fmas in block order.
    template <class Head>
    static inline void combine_pair(float &acc, const Head &h0, const Head &h1, const Ints &i0, const Ints &i1,
                                    const Act &x0, const Act &x1) {
        const __m256i t = _mm256_hadd_epi32(i0.s, i1.s);  // [a a b b | a a b b]
        const __m128i u = _mm_add_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
        const __m128 S = _mm_cvtepi32_ps(_mm_add_epi32(u, _mm_shuffle_epi32(u, 0xB1)));
        acc = RowVec<1>::fma(_mm_cvtss_f32(S), h0.d * Act::scale(x0), acc);
        acc = RowVec<1>::fma(_mm_cvtss_f32(_mm_movehl_ps(S, S)), h1.d * Act::scale(x1), acc);
    }
};

// The scale term, then the min term of the same block: acc = fma(S, D_a * d), then
// acc = fma(M, N), N = -(D_a * dmin) computed as (-D_a) * dmin (negation is exact and rounding
// symmetric: the same f32) (Q2_K, Q4_K, Q5_K).
template <class Act>
struct ScaleAndMinTerms {
    template <int R>
    struct Scales {
        typename RowVec<R>::F d, dmin;
    };
    template <int R, class Head>
    static inline Scales<R> scales(const Head *const h[R]) {
        return {RowVec<R>::gather([&](int r) { return h[r]->d; }), RowVec<R>::gather([&](int r) { return h[r]->dmin; })};
    }
    template <int R>
    static inline void combine(typename RowVec<R>::F &acc, const Scales<R> &w, const Ints *ints, const Act &x) {
        using V = RowVec<R>;
        const float D_a = Act::scale(x);
        if constexpr (R == 1) {  // S and M of one row in one reduction: [S, S, M, M]
            const __m256i t = _mm256_hadd_epi32(ints[0].s, ints[0].m);  // [s s m m | s s m m]
            const __m128i u = _mm_add_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
            const __m128 SM = _mm_cvtepi32_ps(_mm_add_epi32(u, _mm_shuffle_epi32(u, 0xB1)));
            acc = V::fma(_mm_cvtss_f32(SM), w.d * D_a, acc);
            acc = V::fma(_mm_cvtss_f32(_mm_movehl_ps(SM, SM)), w.dmin * -D_a, acc);
            return;
        }
        __m256i s[R], m[R];
        for (int r = 0; r < R; ++r) s[r] = ints[r].s, m[r] = ints[r].m;
        acc = V::fma(V::cvt(row_sums<R>(s)), V::mul(w.d, V::set1(D_a)), acc);
        acc = V::fma(V::cvt(row_sums<R>(m)), V::mul(w.dmin, V::set1(-D_a)), acc);
    }
    // Two consecutive blocks of one row: S and M of both in one tree, [S0 M0 S1 M1], then the
    // row's four fmas in block order.
    template <class Head>
    static inline void combine_pair(float &acc, const Head &h0, const Head &h1, const Ints &i0, const Ints &i1,
                                    const Act &x0, const Act &x1) {
        const __m256i t = hadd_tree4(i0.s, i0.m, i1.s, i1.m);
        const __m128 SM = _mm_cvtepi32_ps(_mm_add_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1)));
        fma_pair<0, 1, 2, 3>(acc, SM, h0, h1, x0, x1);
    }
    // The four fmas of two consecutive blocks in block order, S0, M0, S1, M1 from those lanes of SM.
    template <int S0, int M0, int S1, int M1, class Head>
    static inline void fma_pair(float &acc, __m128 SM, const Head &h0, const Head &h1, const Act &x0, const Act &x1) {
        const float D0 = Act::scale(x0), D1 = Act::scale(x1);
        acc = RowVec<1>::fma(lane<S0>(SM), h0.d * D0, acc);
        acc = RowVec<1>::fma(lane<M0>(SM), h0.dmin * -D0, acc);
        acc = RowVec<1>::fma(lane<S1>(SM), h1.d * D1, acc);
        acc = RowVec<1>::fma(lane<M1>(SM), h1.dmin * -D1, acc);
    }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
