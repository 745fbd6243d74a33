// Weight formats paired with Q8_0 activations (Q8_0, Q4_0, MXFP4, NVFP4): decode-and-dot written once
// over the ISA layer, in the order of scalar/dot_q8_0_act.cpp: per 32-element block one fma of
// the int lanes with the block's scale d_w * d_a, then hsum8.
#pragma once

#include <cmath>

#include "common/block_fields.h"
#include "common/fp_convert.h"
#include "common/tables.h"
#include "simd/common.h"
#include "simd/ue4m3_table.h"

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
// The block scale d_w * d_a is one IEEE product whatever the register: broadcasting d_w once per
// row block and d_a once per activation block and multiplying the vectors gives every lane the
// scalar code's product (same operand order).

// One Q8_0 activation block, prepared once and shared by the rows of a tile.
template <int K>
struct ActOffset {
    __m256i a;     // the 32 signed bytes
    __m256i base;  // int32 lanes -K * (a[4k] + ... + a[4k+3]); unused where K == 0
    __m256 d;      // d_a in every lane
};

template <int K>
inline ActOffset<K> act_offset(const uint8_t *p) {
    const __m256i a = load256(p + 2);
    __m256i base = _mm256_setzero_si256();
    if constexpr (K > 0) base = _mm256_sub_epi32(base, Isa::dot4(base, _mm256_set1_epi8(K), a));
    return {a, base, _mm256_set1_ps(fp16(p))};
}

// Q8_0 and Q4_0: per 32-element block one fma of the int lanes with d_w * d_a. `w` holds
// w + K (unsigned) where K > 0, else w itself and `aw` = |w| for the sign trick.
template <int K>
struct Block32 {
    static constexpr int kElems = 32;
    static constexpr size_t kActBytes = 34;
    using Act = ActOffset<K>;
    static inline Act act(const uint8_t *a) { return act_offset<K>(a); }
    struct Block {
        __m256i w, aw;
        __m256 d;
    };
    using Acc = Acc8;
    static inline Acc init() { return {_mm256_setzero_ps()}; }
    template <bool Wide>
    static inline void step(Acc &s, const Block &b, const Act &x) {
        __m256i lanes;
        if constexpr (K > 0) lanes = Isa::dot4(x.base, b.w, x.a);
        else lanes = Isa::dot4(_mm256_setzero_si256(), b.aw, _mm256_sign_epi8(x.a, b.w));
        combine(s, b, lanes, x);
    }
    // The float side from the block's exact int lanes (with x.base in them where K > 0): one fma
    // with d_w * d_a. Also the tile driver's (simd/tile_gemm.h), whose lanes come from tiles.
    static inline void combine(Acc &s, const Block &b, __m256i lanes, const Act &x) {
        s.acc = _mm256_fmadd_ps(_mm256_mul_ps(b.d, x.d), _mm256_cvtepi32_ps(lanes), s.acc);
    }
    static inline float finish(const Acc &s) { return hsum8(s.acc); }
};

constexpr int kQ8_0Offset = Isa::kExactDot4 ? 128 : 0;

struct Q8_0 : Block32<kQ8_0Offset> {  // fp16 d | int8 qs[32]
    static constexpr size_t kBytes = 34;
    static inline void decode(const uint8_t *p, Block &b) {
        const __m256i w = load256(p + 2);
        if constexpr (kQ8_0Offset > 0) {
            b.w = _mm256_xor_si256(w, _mm256_set1_epi8(char(0x80)));  // w + 128 as unsigned
        } else {
            b.w = w;
            b.aw = _mm256_abs_epi8(w);
        }
        b.d = _mm256_set1_ps(fp16_lead(p));
    }
};

struct Q4_0 : Block32<8> {  // fp16 d | qs[16]: byte j = element j (lo), j + 16 (hi); q - 8
    static constexpr size_t kBytes = 18;
    static inline void decode(const uint8_t *p, Block &b) {
        b.w = nibbles_lo_hi(p + 2);  // q = w + 8
        b.d = _mm256_set1_ps(fp16_lead(p));
    }
};

// MXFP4: E8M0 e | qs[16]: byte j = element j (lo), j + 16 (hi); values kvalues_fp4 + 12 (0..24).
// ggml's order (scalar/dot_q8_0_act.cpp, spec §5.2): blocks in pairs, the even one into acc1, the
// odd one into acc2, then hsum8(acc1 + acc2); an odd last block is a scalar tail fma(D, (float)S,
// sumf). So the state holds an even block's lanes and scale until its odd partner arrives, and
// finish() knows a block left pending is the tail.
struct MXFP4 {
    static constexpr int kElems = 32;
    static constexpr size_t kBytes = 17;
    static constexpr size_t kActBytes = 34;
    static constexpr int kOffset = 12;
    using Act = ActOffset<kOffset>;
    static inline Act act(const uint8_t *a) { return act_offset<kOffset>(a); }
    struct Block {
        __m256i w;  // value + 12
        __m256 s;   // e8m0_half(e)
    };
    struct Acc {
        __m256 acc1, acc2;
        __m256 d;       // the pending even block: d_a * e8m0_half(e)
        __m256i lanes;  // and its int lanes
        bool pending;
    };
    static inline Acc init() {
        return {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_si256(), false};
    }
    static inline void decode(const uint8_t *p, Block &b) {
        const __m256i table = _mm256_add_epi8(_mm256_broadcastsi128_si256(load128(kValuesFp4)), _mm256_set1_epi8(kOffset));
        b.w = _mm256_shuffle_epi8(table, nibbles_lo_hi(p + 1));
        b.s = _mm256_set1_ps(blocks::mxfp4::e8m0_half(p[0]));
    }
    template <bool Wide>
    static inline void step(Acc &st, const Block &b, const Act &x) {
        const __m256i lanes = Isa::dot4(x.base, b.w, x.a);
        const __m256 d = _mm256_mul_ps(x.d, b.s);
        if (st.pending) {
            st.acc1 = _mm256_fmadd_ps(st.d, _mm256_cvtepi32_ps(st.lanes), st.acc1);
            st.acc2 = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(lanes), st.acc2);
        } else {
            st.d = d;
            st.lanes = lanes;
        }
        st.pending = !st.pending;
    }
    static inline float finish(const Acc &st) {
        float sumf = hsum8(_mm256_add_ps(st.acc1, st.acc2));
        if (st.pending) {
            alignas(32) int32_t l[8];
            _mm256_store_si256(reinterpret_cast<__m256i *>(l), st.lanes);
            int32_t s = 0;
            for (int32_t v : l) s += v;
            sumf = std::fma(_mm256_cvtss_f32(st.d), float(s), sumf);
        }
        return sumf;
    }
};

// NVFP4: UE4M3 d[4] | qs[32]; sub-block s of 16: byte t = element t (lo), t + 8 (hi). Half h
// (32 values) pairs with Q8_0 block 2b + h; lanes 0-3 use sub-block 2h, lanes 4-7 sub-block
// 2h + 1. Values kvalues_fp4 in -12..12, looked up as value + 12 (0..24).
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
        __m256 s[2];   // lanes 0-3: ue4m3_half(d[2h]), lanes 4-7: ue4m3_half(d[2h + 1])
    };
    using Acc = Acc8;
    static inline Acc init() { return {_mm256_setzero_ps()}; }
    static inline void decode(const uint8_t *p, Block &b) {
        const __m256i table = _mm256_add_epi8(_mm256_broadcastsi128_si256(load128(kValuesFp4)), _mm256_set1_epi8(kOffset));
        const __m128i m4 = _mm_set1_epi8(0x0F);
        for (int h = 0; h < 2; ++h) {
            const __m128i x = load128(p + 4 + 16 * h);
            const __m128i lo = _mm_and_si128(x, m4), hi = _mm_and_si128(_mm_srli_epi16(x, 4), m4);
            const __m256i codes = _mm256_setr_m128i(_mm_unpacklo_epi64(lo, hi), _mm_unpackhi_epi64(lo, hi));
            b.w[h] = _mm256_shuffle_epi8(table, codes);
            b.s[h] = _mm256_setr_m128(_mm_set1_ps(kUe4m3Half.v[p[2 * h]]), _mm_set1_ps(kUe4m3Half.v[p[2 * h + 1]]));
        }
    }
    template <bool Wide>
    static inline void step(Acc &st, const Block &b, const Act &x) {
        for (int h = 0; h < 2; ++h) {
            const __m256i lanes = Isa::dot4(x.h[h].base, b.w[h], x.h[h].a);
            st.acc = _mm256_fmadd_ps(_mm256_mul_ps(b.s[h], x.h[h].d), _mm256_cvtepi32_ps(lanes), st.acc);
        }
    }
    static inline float finish(const Acc &s) { return hsum8(s.acc); }
};

}  // namespace memra::simd::MEMRA_SIMD_NS

// The AVX-512 build's pair forms of these formats (simd/common.h WidePairs, WideRowPairs).
#ifdef MEMRA_SIMD_WIDE512
#include "simd/wide512_q8_0_act.h"
#endif
