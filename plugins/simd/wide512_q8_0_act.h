// The AVX-512 build's pair forms of the formats paired with Q8_0 activations, included by
// simd/formats_q8_0_act.h only where the ISA selection defines MEMRA_SIMD_WIDE512: the rows path
// on activation pairs (WidePairs) and the token path on row pairs (WideRowPairs), each half of a
// 512-bit register exactly the 256-bit computation of its (row, activation), so the results are
// those of every other build. The formats themselves (decode, step, finish) are the shared ones.
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "simd/formats_q8_0_act.h"

namespace memra::simd::MEMRA_SIMD_NS {

// The rows path (PairsRowsPath below): activations j and j + 1 in the low and high halves of one 512-bit register, so one vpdpbusd / cvt / mul / fma serves two
// (row, activation) pairs. Each half is exactly the 256-bit computation of its activation.
template <int K>
struct ActPair {
    __m512i a, base;
    __m512 d;
};
template <int K>
inline ActPair<K> act_pair(const uint8_t *p0, const uint8_t *p1) {
    static_assert(K > 0, "the pair form is the offset form");
    const __m512i a = _mm512_inserti64x4(_mm512_castsi256_si512(load256(p0 + 2)), load256(p1 + 2), 1);
    const __m512i zero = _mm512_setzero_si512();
    const __m512i base = _mm512_sub_epi32(zero, _mm512_dpbusd_epi32(zero, _mm512_set1_epi8(char(K)), a));
    const __m512 d = _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_set1_ps(fp16(p0))), _mm256_set1_ps(fp16(p1)), 1);
    return {a, base, d};
}
// acc + (w + K) . a - K * lane sums, scaled by s * d_a lane by lane: both halves at once.
template <int K>
inline __m512 pair_fma(__m512 acc, __m256i w, __m256 s, const ActPair<K> &x) {
    const __m512i lanes = _mm512_dpbusd_epi32(x.base, _mm512_broadcast_i64x4(w), x.a);
    return _mm512_fmadd_ps(_mm512_mul_ps(_mm512_broadcast_f32x8(s), x.d), _mm512_cvtepi32_ps(lanes), acc);
}
inline void finish_pair(__m512 acc, float &lo, float &hi) {
    lo = hsum8(_mm512_castps512_ps256(acc));
    hi = hsum8(_mm512_extractf32x8_ps(acc, 1));
}

// The token path's row pairs (RowPairsTokenPath below): rows r and r + 1 against one
// activation block, row r in the low half. [d_w(p0) x 8 | d_w(p1) x 8], each the exact widening
// of its fp16, as fp16_lead gives it.
inline __m512 fp16_row_pair(const uint8_t *p0, const uint8_t *p1) {
    uint16_t h0, h1;
    std::memcpy(&h0, p0, 2);
    std::memcpy(&h1, p1, 2);
    const __m128 d = _mm_cvtph_ps(_mm_insert_epi16(_mm_cvtsi32_si128(h0), h1, 1));
    return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1),
                                 _mm512_castps128_ps512(d));
}
// acc + each row's (w + K) . a - K * lane sums, scaled by d_w * d_a: the 256-bit step per half.
template <int K>
inline __m512 row_pair_fma(__m512 acc, __m512i w, __m512 d_w, const ActOffset<K> &x) {
    static_assert(K > 0, "the pair form is the offset form");
    const __m512i lanes = _mm512_dpbusd_epi32(_mm512_broadcast_i64x4(x.base), w, _mm512_broadcast_i64x4(x.a));
    return _mm512_fmadd_ps(_mm512_mul_ps(d_w, _mm512_broadcast_f32x8(x.d)), _mm512_cvtepi32_ps(lanes), acc);
}
inline __m512 acc_pair(__m256 lo, __m256 hi) { return _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1); }

// The rows path for formats with a pair form P (Act2, act2, Acc2, init2, step2, finish2):
// activations 2p and 2p + 1 share one 512-bit accumulator state per row, each half exactly its
// own (row, activation) chain. An odd m pairs the last activation with itself; that half is dropped.
template <class F, class P>
struct PairsRowsPath {
    static constexpr bool kEnabled = true;
    template <int R>
    static inline void tile(const uint8_t *w, size_t row_bytes, int32_t n, const uint8_t *xq, size_t xq_stride,
                            int32_t m, float *y, size_t ldy) {
        const int32_t pairs = (m + 1) / 2;
        typename P::Acc2 acc[kMaxM / 2][R];
        for (int32_t p = 0; p < pairs; ++p)
            for (int r = 0; r < R; ++r) acc[p][r] = P::init2();
        typename F::Block blk[R];
        const int32_t nb = n / F::kElems;
        for (int32_t b = 0; b < nb; ++b) {
            decode_rows<F, R>(w, row_bytes, b, blk);
            const uint8_t *xb = xq + size_t(b) * F::kActBytes;
            for (int32_t p = 0; p < pairs; ++p) {
                const int32_t j1 = 2 * p + 1 < m ? 2 * p + 1 : 2 * p;
                const typename P::Act2 x = P::act2(xb + size_t(2 * p) * xq_stride, xb + size_t(j1) * xq_stride);
                for (int r = 0; r < R; ++r) P::step2(acc[p][r], blk[r], x);
            }
        }
        for (int32_t p = 0; p < pairs; ++p)
            for (int r = 0; r < R; ++r) {
                float lo, hi;
                P::finish2(acc[p][r], lo, hi);
                y[size_t(2 * p) * ldy + size_t(r)] = lo;
                if (2 * p + 1 < m) y[size_t(2 * p + 1) * ldy + size_t(r)] = hi;
            }
    }
    // 8 rows per tile: each prepared activation pair (two loads, the offset base, two fp16
    // scales: about 11 of the 27 vector operations of a 4-row step) is shared by twice the
    // rows. memra-bench-micro gemm32, 1536 x 4096, this VM, 2026-12-03, 4 -> 8 rows: q4_0
    // 3.96 -> 3.25 ms, q8_0 3.88 -> 3.17, nvfp4 3.48 -> 3.11; 16 rows gained 2-4% more, 8
    // rows for the other formats' tiles nothing (avx2) or lost up to 28% (avx512 Q8_K
    // formats, whose decoded super-blocks then spill out of L1). Accumulators held in
    // registers over 8-activation groups (the weights decoded once per group) were slower.
    static inline void gemm(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const uint8_t *x,
                            size_t xq_stride, int32_t m, float *y, size_t ldy) {
        int32_t r = 0;
        for (; r + 8 <= rows; r += 8) tile<8>(w + size_t(r) * row_bytes, row_bytes, n, x, xq_stride, m, y + r, ldy);
        for (; r + 4 <= rows; r += 4) tile<4>(w + size_t(r) * row_bytes, row_bytes, n, x, xq_stride, m, y + r, ldy);
        for (; r < rows; ++r) tile<1>(w + size_t(r) * row_bytes, row_bytes, n, x, xq_stride, m, y + r, ldy);
    }
};

// The token path for formats with a row-pair form P (RowPair, pair_init, pair_dot, pair_split):
// row r in the low half, row r + 1 in the high half, each half exactly the 256-bit computation
// of its row, so one vpdpbusd / cvt / mul / fma serves two rows where the 32-element formats'
// blocks are too cheap to hide those. As simd/common.h token_tile, for an even R.
template <class F, class P>
struct RowPairsTokenPath {
    static constexpr bool kEnabled = true;
    template <int R>
    static inline void tile(typename F::Acc acc_io[R], const uint8_t *w, size_t row_bytes, int32_t b0, int32_t b1,
                            const typename F::Act *x) {
        typename P::RowPair acc[R / 2];
        for (int q = 0; q < R / 2; ++q) acc[q] = P::pair_init(acc_io[2 * q], acc_io[2 * q + 1]);
        PrefetchAhead<F, R> prefetch(b0, row_bytes);
        for (int32_t b = b0; b < b1; ++b) {
            const size_t ahead = prefetch.at_block(b);
            for (int q = 0; q < R / 2; ++q) {
                const uint8_t *p = w + size_t(2 * q) * row_bytes + size_t(b) * F::kBytes;
                _mm_prefetch(reinterpret_cast<const char *>(p + ahead), _MM_HINT_T1);
                _mm_prefetch(reinterpret_cast<const char *>(p + row_bytes + ahead), _MM_HINT_T1);
                P::pair_dot(acc[q], p, p + row_bytes, x[b - b0]);
            }
        }
        for (int q = 0; q < R / 2; ++q) P::pair_split(acc[q], acc_io[2 * q], acc_io[2 * q + 1]);
    }
};

// The rows path's state where the format's is one float accumulator (Acc8): one 512-bit one.
struct OneAccPair {
    using Acc2 = __m512;
    static inline Acc2 init2() { return _mm512_setzero_ps(); }
    static inline void finish2(__m512 acc, float &lo, float &hi) { finish_pair(acc, lo, hi); }
};

// Block32<K> (Q8_0, Q4_0): the pair forms of both paths.
template <int K>
struct Block32Pairs : OneAccPair {
    using Act2 = ActPair<K>;
    static inline Act2 act2(const uint8_t *a0, const uint8_t *a1) { return act_pair<K>(a0, a1); }
    static inline void step2(__m512 &acc, const typename Block32<K>::Block &b, const Act2 &x) {
        acc = pair_fma<K>(acc, b.w, b.d, x);
    }
    using RowPair = __m512;
    static inline RowPair pair_init(const Acc8 &r0, const Acc8 &r1) { return acc_pair(r0.acc, r1.acc); }
    static inline void pair_split(RowPair v, Acc8 &r0, Acc8 &r1) {
        r0.acc = _mm512_castps512_ps256(v);
        r1.acc = _mm512_extractf32x8_ps(v, 1);
    }
};

struct Q8_0Pairs : Block32Pairs<kQ8_0Offset> {
    static inline void pair_dot(__m512 &acc, const uint8_t *p0, const uint8_t *p1, const Q8_0::Act &x) {
        const __m512i w = _mm512_inserti64x4(_mm512_castsi256_si512(load256(p0 + 2)), load256(p1 + 2), 1);
        acc = row_pair_fma(acc, _mm512_xor_si512(w, _mm512_set1_epi8(char(0x80))), fp16_row_pair(p0, p1), x);
    }
};

struct Q4_0Pairs : Block32Pairs<8> {
    static inline void pair_dot(__m512 &acc, const uint8_t *p0, const uint8_t *p1, const Q4_0::Act &x) {
        const __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_broadcastsi128_si256(load128(p0 + 2))),
                                             _mm256_broadcastsi128_si256(load128(p1 + 2)), 1);
        const __m512i w = _mm512_and_si512(_mm512_srlv_epi64(q, _mm512_setr_epi64(0, 0, 4, 4, 0, 0, 4, 4)),
                                           _mm512_set1_epi8(0x0F));
        acc = row_pair_fma(acc, w, fp16_row_pair(p0, p1), x);
    }
};

// NVFP4: the rows path's pairs (its token path keeps one row per register).
struct NVFP4Pairs : OneAccPair {
    struct Act2 {
        ActPair<NVFP4::kOffset> h[2];
    };
    static inline Act2 act2(const uint8_t *a0, const uint8_t *a1) {
        return {{act_pair<NVFP4::kOffset>(a0, a1), act_pair<NVFP4::kOffset>(a0 + 34, a1 + 34)}};
    }
    static inline void step2(__m512 &acc, const NVFP4::Block &b, const Act2 &x) {
        for (int h = 0; h < 2; ++h) acc = pair_fma<NVFP4::kOffset>(acc, b.w[h], b.s[h], x.h[h]);
    }
};

// MXFP4: the rows path's pairs, each half MXFP4's own state (an even block's lanes and scale held
// until its odd partner arrives; one left pending at the end is ggml's scalar tail).
struct MXFP4Pairs {
    using Act2 = ActPair<MXFP4::kOffset>;
    static inline Act2 act2(const uint8_t *a0, const uint8_t *a1) { return act_pair<MXFP4::kOffset>(a0, a1); }
    struct Acc2 {
        __m512 acc1, acc2, d;
        __m512i lanes;
        bool pending;
    };
    static inline Acc2 init2() {
        return {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_si512(), false};
    }
    static inline void step2(Acc2 &st, const MXFP4::Block &b, const Act2 &x) {
        const __m512i lanes = _mm512_dpbusd_epi32(x.base, _mm512_broadcast_i64x4(b.w), x.a);
        const __m512 d = _mm512_mul_ps(x.d, _mm512_broadcast_f32x8(b.s));
        if (st.pending) {
            st.acc1 = _mm512_fmadd_ps(st.d, _mm512_cvtepi32_ps(st.lanes), st.acc1);
            st.acc2 = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(lanes), st.acc2);
        } else {
            st.d = d;
            st.lanes = lanes;
        }
        st.pending = !st.pending;
    }
    static inline void finish2(const Acc2 &st, float &lo, float &hi) {
        finish_pair(_mm512_add_ps(st.acc1, st.acc2), lo, hi);
        if (!st.pending) return;
        alignas(64) int32_t l[16];
        alignas(64) float d[16];
        _mm512_store_si512(l, st.lanes);
        _mm512_store_ps(d, st.d);
        int32_t s_lo = 0, s_hi = 0;
        for (int k = 0; k < 8; ++k) s_lo += l[k], s_hi += l[8 + k];
        lo = std::fma(d[0], float(s_lo), lo);
        hi = std::fma(d[8], float(s_hi), hi);
    }
};

template <>
struct WidePairs<Q8_0> : PairsRowsPath<Q8_0, Q8_0Pairs> {};
template <>
struct WidePairs<Q4_0> : PairsRowsPath<Q4_0, Q4_0Pairs> {};
template <>
struct WidePairs<NVFP4> : PairsRowsPath<NVFP4, NVFP4Pairs> {};
template <>
struct WidePairs<MXFP4> : PairsRowsPath<MXFP4, MXFP4Pairs> {};
template <>
struct WideRowPairs<Q8_0> : RowPairsTokenPath<Q8_0, Q8_0Pairs> {};
template <>
struct WideRowPairs<Q4_0> : RowPairsTokenPath<Q4_0, Q4_0Pairs> {};

}  // namespace memra::simd::MEMRA_SIMD_NS
