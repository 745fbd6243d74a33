// Weight formats paired with Q8_0 activations (Q8_0, Q4_0, MXFP4, NVFP4): decode-and-dot written once
// over the ISA layer, in the canonical order v2 of scalar/dot_q8_0_act.cpp: per 32-element block
// (NVFP4: per 16-element sub-block) the exact integer sum and one fma with the block's scale
// (weight scale * d_a), with lanes over output rows (simd/row_sums.h).
#pragma once

#include "common/block_fields.h"
#include "common/fp_convert.h"
#include "common/tables.h"
#include "simd/common.h"
#include "simd/scale_byte_tables.h"

namespace memra::simd::MEMRA_SIMD_NS {

// Every dot here is exact in integers and the offset form is used wherever it fits the ISA:
// the weights as unsigned u = w + k (k = 8 for Q4_0, 12 for MXFP4 and NVFP4, 128 for Q8_0) against the
// signed activations, the offset removed by starting each block's int lanes at
// -k * (sum of the activation's four bytes of the lane), an int32 vector computed once per
// activation block and shared by every row of a tile. That leaves one dot4 per (row,
// activation, block) and no sign trick. Ranges for vpmaddubsw (AVX2): Q4_0 pairs <= 2*15*127,
// MXFP4 and NVFP4 <= 2*24*127; Q8_0's 0..255 needs an exact dot4 (VNNI: Isa::kExactDot4), so the AVX2
// build keeps the sign trick for Q8_0 (|w| <= 128 against sign(w) * a: at most 32512, the
// canonical quantizer never writes -128: plugins/common/quantize.cpp).
// The block scale d_w * d_a is one IEEE product whatever the register: a vector of the rows'
// d_w times d_a broadcast gives every lane the scalar code's product.

// One Q8_0 activation block, prepared once and shared by the rows of a tile.
template <int K>
struct ActOffset {
    __m256i a;     // the 32 signed bytes
    __m256i base;  // int32 lanes -K * (a[4k] + ... + a[4k+3]); unused where K == 0
    float d;       // d_a
    static float scale(const ActOffset &x) { return x.d; }
};

template <int K>
inline ActOffset<K> act_offset(const uint8_t *p) {
    const __m256i a = load256(p + 2);
    __m256i base = _mm256_setzero_si256();
    if constexpr (K > 0) base = _mm256_sub_epi32(base, Isa::dot4(base, _mm256_set1_epi8(K), a));
    return {a, base, fp16(p)};
}

// A 32-element block with one weight scale d (Q8_0, Q4_0: d_w; MXFP4: e8m0_half(e)): S = the
// block's int lanes summed, one fma with d * d_a. `w` holds w + K (unsigned) where K > 0, else w
// itself and `aw` = |w| for the sign trick. The format (Derived) adds kBytes and decode.
template <class Derived, int K>
struct Block32 : OneTerm<ActOffset<K>> {
    static constexpr int kElems = 32;
    static constexpr size_t kActBytes = 34;
    using Act = ActOffset<K>;
    static inline Act act(const uint8_t *a) { return act_offset<K>(a); }
    struct Block {
        __m256i w, aw;
        float d;
    };
    using Head = Block;
    static inline const Head &head(const Block &b) { return b; }
    // The int lanes, with x.base in them where K > 0 (their total is the block's S).
    template <bool Wide>
    static inline Ints ints(const Block &b, const Act &x) {
        if constexpr (K > 0) return {Isa::dot4(x.base, b.w, x.a), _mm256_setzero_si256()};
        else return {Isa::dot4(_mm256_setzero_si256(), b.aw, _mm256_sign_epi8(x.a, b.w)), _mm256_setzero_si256()};
    }
    static inline Ints token(const uint8_t *p, const Act &x, Head &h) {
        Derived::decode(p, h);
        return ints<false>(h, x);
    }
};

constexpr int kQ8_0Offset = Isa::kExactDot4 ? 128 : 0;

struct Q8_0 : Block32<Q8_0, kQ8_0Offset> {  // fp16 d | int8 qs[32]
    static constexpr size_t kBytes = 34;
    static inline void decode(const uint8_t *p, Block &b) {
        const __m256i w = load256(p + 2);
        if constexpr (kQ8_0Offset > 0) {
            b.w = _mm256_xor_si256(w, _mm256_set1_epi8(char(0x80)));  // w + 128 as unsigned
        } else {
            b.w = w;
            b.aw = _mm256_abs_epi8(w);
        }
        b.d = fp16_lead(p);
    }
};

struct Q4_0 : Block32<Q4_0, 8> {  // fp16 d | qs[16]: byte j = element j (lo), j + 16 (hi); q - 8
    static constexpr size_t kBytes = 18;
    static inline void decode(const uint8_t *p, Block &b) {
        b.w = nibbles_lo_hi(p + 2);  // q = w + 8
        b.d = fp16_lead(p);
    }
};

// MXFP4: E8M0 e | qs[16]: byte j = element j (lo), j + 16 (hi); values kvalues_fp4 + 12 (0..24);
// the block's scale e8m0_half(e), by table (simd/scale_byte_tables.h).
struct MXFP4 : Block32<MXFP4, 12> {
    static constexpr size_t kBytes = 17;
    static constexpr int kOffset = 12;
    static inline void decode(const uint8_t *p, Block &b) {
        const __m256i table = _mm256_add_epi8(_mm256_broadcastsi128_si256(load128(kValuesFp4)), _mm256_set1_epi8(kOffset));
        b.w = _mm256_shuffle_epi8(table, nibbles_lo_hi(p + 1));
        b.d = kE8m0Half.v[p[0]];
    }
};

// NVFP4: UE4M3 d[4] | qs[32]; sub-block s of 16: byte t = element t (lo), t + 8 (hi). Half h
// (32 values) pairs with Q8_0 block 2b + h; its int lanes 0-3 are sub-block 2h, 4-7 sub-block
// 2h + 1 (Ints: s = half 0, m = half 1). Values kvalues_fp4 in -12..12, looked up as value + 12
// (0..24). Four terms per block, in sub-block order, each fma with ue4m3_half(d[s]) * d_a(2b + s/2).
struct NVFP4 {
    static constexpr int kElems = 64;
    static constexpr size_t kBytes = 36;
    static constexpr size_t kActBytes = 68;
    static constexpr int kOffset = 12;
    struct Act {
        ActOffset<kOffset> h[2];
    };
    static inline Act act(const uint8_t *a) { return {{act_offset<kOffset>(a), act_offset<kOffset>(a + 34)}}; }
    struct Block {
        __m256i w[2];  // value + 12
        float s[4];    // ue4m3_half(d[s])
    };
    using Head = Block;
    static inline const Head &head(const Block &b) { return b; }
    static inline void decode(const uint8_t *p, Block &b) {
        const __m256i table = _mm256_add_epi8(_mm256_broadcastsi128_si256(load128(kValuesFp4)), _mm256_set1_epi8(kOffset));
        const __m128i m4 = _mm_set1_epi8(0x0F);
        for (int h = 0; h < 2; ++h) {
            const __m128i x = load128(p + 4 + 16 * h);
            const __m128i lo = _mm_and_si128(x, m4), hi = _mm_and_si128(_mm_srli_epi16(x, 4), m4);
            const __m256i codes = _mm256_setr_m128i(_mm_unpacklo_epi64(lo, hi), _mm_unpackhi_epi64(lo, hi));
            b.w[h] = _mm256_shuffle_epi8(table, codes);
        }
        for (int s = 0; s < 4; ++s) b.s[s] = kUe4m3Half.v[p[s]];
    }
    template <bool Wide>
    static inline Ints ints(const Block &b, const Act &x) {
        return {Isa::dot4(x.h[0].base, b.w[0], x.h[0].a), Isa::dot4(x.h[1].base, b.w[1], x.h[1].a)};
    }
    static inline Ints token(const uint8_t *p, const Act &x, Head &h) {
        decode(p, h);
        return ints<false>(h, x);
    }
    template <int R>
    struct Scales {
        typename RowVec<R>::F s[4];
    };
    template <int R>
    static inline Scales<R> scales(const Head *const h[R]) {
        Scales<R> w;
        for (int s = 0; s < 4; ++s) w.s[s] = RowVec<R>::gather([&](int r) { return h[r]->s[s]; });
        return w;
    }
    template <int R>
    static inline void combine(typename RowVec<R>::F &acc, const Scales<R> &w, const Ints *ints, const Act &x) {
        using V = RowVec<R>;
        for (int h = 0; h < 2; ++h) {
            __m256i v[R];
            for (int r = 0; r < R; ++r) v[r] = h == 0 ? ints[r].s : ints[r].m;
            typename V::I lo, hi;
            row_half_sums<R>(v, lo, hi);
            const typename V::F d_a = V::set1(x.h[h].d);
            acc = V::fma(V::cvt(lo), V::mul(w.s[2 * h], d_a), acc);
            acc = V::fma(V::cvt(hi), V::mul(w.s[2 * h + 1], d_a), acc);
        }
    }
};

}  // namespace memra::simd::MEMRA_SIMD_NS

// The rows path on panels: the AVX-512 build's 16-row panels and row-pair token path of Q8_0,
// Q4_0 and MXFP4 (simd/common.h TokenRowPairs), or the 256-bit builds' 8-row panels.
#ifdef MEMRA_SIMD_WIDE512
#include "simd/wide512_q8_0_act.h"
#else
#include "simd/panels256.h"
#endif
