// Weight formats paired with Q8_K activations (the K-quants, IQ4_XS, IQ3_S): decode-and-dot
// written once over the ISA layer, in the canonical order v2 of scalar/dot_kquants.cpp and
// dot_iquants.cpp. Per super-block: the int lanes (sub-block scales multiplied in integers,
// Isa::dot4_scaled) summed exactly to S, ONE fma with D = D_a * d, and for Q2_K, Q4_K and Q5_K
// the exact min sum M and one fma with N = -(D_a * dmin) (simd/row_sums.h).
//
// Operand ranges for vpmaddubsw, which every layer's dot4_scaled uses (pair sums must fit int16;
// activations are -127..127): Q4_K 0..15, Q5_K 0..31, Q6_K 0..63, Q2_K 0..3 unsigned; Q3_K
// |q| <= 4, IQ4_XS |v| <= 127 (pairs <= 32258), IQ3_S 1..15 with the sign moved onto the
// activation. Scales: int8-range multipliers (Q6_K's int8, the others 6 bits or less).
#pragma once

#include "common/act_layout.h"
#include "common/tables.h"
#include "simd/common.h"

#include <utility>

namespace memra::simd::MEMRA_SIMD_NS {

namespace q8k {  // f32 d | int8 qs[256] | int16 bsums[16] (common/act_layout.h)
constexpr size_t kBytes = q8_K_act::kBlockBytes;
inline const uint8_t *qs(const uint8_t *a) { return a + q8_K_act::kQsOffset; }
inline __m256i bsums(const uint8_t *a) { return load256(a + q8_K_act::kBsumsOffset); }  // 16 x int16
}  // namespace q8k

// One Q8_K activation block as the steps read it, prepared once per block and shared by all the
// rows of a tile: D, bsums (16 x int16) and T_j = bs[2j] + bs[2j+1] (8 x int16, |T| <= 4064).
// Formats take what they use; the compiler drops the rest.
struct ActK {
    const uint8_t *a;
    float D;
    __m256i bs;
    __m128i T;
    static float scale(const ActK &x) { return x.D; }
};
inline ActK act_k(const uint8_t *a) {
    const __m256i bs = q8k::bsums(a);
    return {a, f32(a), bs, _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1))};
}

// The same plus, for formats storing signed quants as q + K (OChunk), K times the int16 pair
// sums of each chunk's activations: 8 maddubs per activation block, shared by the tile's rows.
template <int K>
struct ActKOffset : ActK {
    __m256i koff[8];
};
template <int K>
inline ActKOffset<K> act_k_offset(const uint8_t *a) {
    ActKOffset<K> x{act_k(a), _mm256_setzero_si256()};
    for (int c = 0; c < 8; ++c) x.koff[c] = _mm256_maddubs_epi16(_mm256_set1_epi8(K), load256(q8k::qs(a) + 32 * c));
    return x;
}

// The int16 multipliers of chunk c for Isa::dot4_scaled (lanes 0-3 = its first 16 elements,
// 4-7 = its second 16) are int16 c of each 128-bit half of one per-block vector, so each chunk
// costs one in-lane shuffle. The vector: 8 scales (one per 32-element chunk) in both halves, or
// 16 scales (one per 16 elements) as [even | odd]. Every scale is an int8 value.
inline __m256i scales16_of8(__m128i bytes) { return broadcast128(_mm_cvtepi8_epi16(bytes)); }
inline __m256i scales16_of16(__m128i bytes) {
    const __m128i even_odd = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    return _mm256_cvtepi8_epi16(_mm_shuffle_epi8(bytes, even_odd));
}
inline __m256i chunk_scale(__m256i scales16, int c) {
    return _mm256_shuffle_epi8(scales16, _mm256_set1_epi16(int16_t(((2 * c + 1) << 8) | (2 * c))));
}
// The same from 8 unsigned byte scales in both halves (Q4_K / Q5_K): byte c zero-extended by the
// shuffle itself (index 0x80 gives 0), so the head needs no vpmovsxbw (and its mins one vpshufb):
// two shuffles less per block, on Zen 5's two shuffle pipes. In cache on the Zen 5 VM
// (memra-bench-micro gemv, best of 10 alternating runs, 2026-12-05): avx512bf16 q5_K 23.6 -> 25.0
// GB/s, avx2 q4_K 19.9 -> 20.4, q5_K 20.6 -> 21.0, avx512bf16 q4_K even (its pair step has its own).
inline __m256i chunk_scale_u8(__m256i bytes, int c) { return _mm256_shuffle_epi8(bytes, _mm256_set1_epi16(int16_t(0x8000 | c))); }

// Bits From.. of every byte of x moved to bits To.. of the same byte: one 16-bit shift and one
// and; `mask` keeps only the moved bits (their source lies in the same byte, so nothing the
// 16-bit shift carries over from the neighbouring byte survives).
template <int From, int To>
inline __m256i move_bits(__m256i x, __m256i mask) {
    if constexpr (To > From) return _mm256_and_si256(_mm256_slli_epi16(x, To - From), mask);
    else if constexpr (To < From) return _mm256_and_si256(_mm256_srli_epi16(x, From - To), mask);
    else return _mm256_and_si256(x, mask);
}

// Q4_K / Q5_K: the 12-byte packing of eight 6-bit scales and mins (get_scale_min_k4) unpacked
// into bytes 0-7 = scales, 8-15 = mins, in vector registers (ggml's AVX2 kernels do the same
// with 32-bit scalar masks): with S the 12 bytes, for j < 4
//   scale j = S[j] & 63,                  scale 4+j = (S[8+j] & 15) | (S[j] >> 6) << 4,
//   min j   = S[4+j] & 63,                min 4+j   = (S[8+j] >> 4) | (S[4+j] >> 6) << 4.
// A gathers the byte holding each low part, B the byte holding each high part. Done on each
// 128-bit lane of x (12 bytes there, the rest ignored): an __m128i for one block, an __m256i for
// two (the AVX-512 builds' token path, simd/wide512_q8_K_act.h).
inline __m128i in_lanes(__m128i, __m128i pattern) { return pattern; }  // the 16 bytes in every lane
inline __m256i in_lanes(__m256i, __m128i pattern) { return broadcast128(pattern); }
inline __m128i shuffle_in_lanes(__m128i x, __m128i sel) { return _mm_shuffle_epi8(x, sel); }
inline __m256i shuffle_in_lanes(__m256i x, __m128i sel) { return _mm256_shuffle_epi8(x, broadcast128(sel)); }
inline __m128i srli16(__m128i x, int n) { return _mm_srli_epi16(x, n); }
inline __m256i srli16(__m256i x, int n) { return _mm256_srli_epi16(x, n); }
#ifdef MEMRA_SIMD_WIDE512  // four rows' blocks in the 128-bit lanes of a zmm (the 16-row panels)
inline __m512i in_lanes(__m512i, __m128i pattern) { return _mm512_broadcast_i32x4(pattern); }
inline __m512i shuffle_in_lanes(__m512i x, __m128i sel) { return _mm512_shuffle_epi8(x, _mm512_broadcast_i32x4(sel)); }
inline __m512i srli16(__m512i x, int n) { return _mm512_srli_epi16(x, unsigned(n)); }
#endif
template <class V>
inline V k4_scales_mins_lanes(V x) {
    const V A = shuffle_in_lanes(x, _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11));
    const V B = shuffle_in_lanes(x, _mm_setr_epi8(0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7));
    const V lo_mask = in_lanes(x, _mm_setr_epi8(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 0, 0, 0, 0));
    const V hi_nibble_mask = in_lanes(x, _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15, 15, 15, 15));
    const V top_mask = in_lanes(x, _mm_setr_epi8(0, 0, 0, 0, 48, 48, 48, 48, 0, 0, 0, 0, 48, 48, 48, 48));
    const V low = (A & lo_mask) | (srli16(A, 4) & hi_nibble_mask);
    return low | (srli16(B, 2) & top_mask);  // bits 6-7 -> 4-5
}
inline __m128i k4_scales_mins(const uint8_t *S) { return k4_scales_mins_lanes(load128(S)); }  // 12 bytes + 4 of qs read

// A super-block format is written as its per-block fields and one chunk of 32 at a time:
//   Head, head(p)          what the block's chunks and float work share (d, scales, mins)
//   Chunk, chunk<c>(p, h)  chunk c (0..7) with its multipliers: UChunk or SChunk
//   ints(h, lanes, x)      the block's Ints from its scaled int lanes (a min or offset term added)
//   the float side: OneTerm or ScaleAndMinTerms (simd/row_sums.h)
// SuperBlock<Fields> then gives both paths from those: the token path (dot) decodes and dots
// chunk by chunk in registers; the rows path decodes the chunks into Block once and dots it
// against every activation (on the AVX-512 build in 512-bit chunk pairs: Wide).
template <class Chunk>
struct StoredChunks;
template <>
struct StoredChunks<UChunk> {
    __m256i q[8], sc[8];
    void set(int c, const UChunk &k) { q[c] = k.q, sc[c] = k.sc; }
    template <bool Wide>
    __m256i lanes(const int8_t *a) const { return Isa::template scaled_lanes8<Wide>(q, sc, a); }
};
template <>
struct StoredChunks<SChunk> {
    __m256i sign[8], mag[8], sc[8];
    void set(int c, const SChunk &k) { sign[c] = k.sign, mag[c] = k.mag, sc[c] = k.sc; }
    template <bool Wide>
    __m256i lanes(const int8_t *a) const { return Isa::template signed_scaled_lanes8<Wide>(sign, mag, sc, a); }
};

// On the rows path an offset chunk is stored in the signed form (sign = u - K, mag = |sign|).
template <int K>
struct StoredChunks<OChunk<K>> : StoredChunks<SChunk> {
    void set(int c, const OChunk<K> &k) {
        sign[c] = _mm256_sub_epi8(k.u, _mm256_set1_epi8(K)), mag[c] = _mm256_abs_epi8(sign[c]), sc[c] = k.sc;
    }
};

// The activation block a format reads: its own Act / act where it has them, else ActK.
template <class F, class = void>
struct ActOf {
    using type = ActK;
    static inline ActK make(const uint8_t *a) { return act_k(a); }
};
template <class F>
struct ActOf<F, std::void_t<typename F::Act>> {
    using type = typename F::Act;
    static inline type make(const uint8_t *a) { return F::act(a); }
};

// A layer's own token-path lanes of a format's super-block (kEnabled, lanes(p, h, x)):
// specialized by simd/wide512_q8_K_act.h in the AVX-512 builds (chunk pairs in 512 bits) and
// by simd/token256_q8_K_act.h in the 256-bit builds.
template <class F, class = void>
struct TokenLanes {
    static constexpr bool kEnabled = false;
};

template <class F>
struct SuperBlock : F {
    using Fields = F;
    static constexpr int kElems = 256;
    static constexpr size_t kActBytes = q8k::kBytes;
    using Act = typename ActOf<F>::type;
    static inline Act act(const uint8_t *a) { return ActOf<F>::make(a); }
    using Head = typename F::Head;
    struct Block {
        Head h;
        StoredChunks<typename F::Chunk> k;
    };
    static inline const Head &head(const Block &b) { return b.h; }
    template <int... C>
    static inline void decode_chunks(const uint8_t *p, Block &b, std::integer_sequence<int, C...>) {
        (b.k.set(C, F::template chunk<C>(p, b.h)), ...);
    }
    static inline void decode(const uint8_t *p, Block &b) {
        b.h = F::head(p);
        decode_chunks(p, b, std::make_integer_sequence<int, 8>());
    }
    template <bool Wide>
    static inline Ints ints(const Block &b, const Act &x) {
        return F::ints(b.h, b.k.template lanes<Wide>(reinterpret_cast<const int8_t *>(q8k::qs(x.a))), x);
    }
    // Chunk c against its 32 activations (and, for an offset chunk, their prepared koff).
    template <int C>
    static inline __m256i dot_at(__m256i acc, const UChunk &k, const Act &x) {
        return chunk_dot<Isa>(acc, k, load256(q8k::qs(x.a) + 32 * C));
    }
    template <int C>
    static inline __m256i dot_at(__m256i acc, const SChunk &k, const Act &x) {
        return chunk_dot<Isa>(acc, k, load256(q8k::qs(x.a) + 32 * C));
    }
    template <int C, int K>
    static inline __m256i dot_at(__m256i acc, const OChunk<K> &k, const Act &x) {
        return chunk_dot<Isa>(acc, k, load256(q8k::qs(x.a) + 32 * C), x.koff[C]);
    }
    // Even and odd chunks in two int chains (integer sums: any association is exact), so the
    // dot's latency is half the chain.
    template <int... C>
    static inline __m256i dot_chunks(const uint8_t *p, const Head &h, const Act &x, std::integer_sequence<int, C...>) {
        __m256i even = _mm256_setzero_si256(), odd = _mm256_setzero_si256();
        ((even = dot_at<2 * C>(even, F::template chunk<2 * C>(p, h), x),
          odd = dot_at<2 * C + 1>(odd, F::template chunk<2 * C + 1>(p, h), x)),
         ...);
        return _mm256_add_epi32(even, odd);
    }
    // The token path: decoded chunk by chunk in registers, nothing stored. TokenA: Act, or the
    // layer's token-only form of it (TokenAct, simd/common.h).
    template <class TokenA>
    static inline Ints token(const uint8_t *p, const TokenA &x, Head &h) {
        h = F::head(p);
        if constexpr (TokenLanes<F>::kEnabled) return F::ints(h, TokenLanes<F>::lanes(p, h, x), x);
        else return F::ints(h, dot_chunks(p, h, x, std::make_integer_sequence<int, 4>()), x);
    }
};

// Formats with one super-block scale d and no min term: S is the scaled lanes' total.
struct ScaleOnly : OneTerm<ActK> {
    template <class Head>
    static inline Ints ints(const Head &, __m256i lanes, const ActK &) {
        return {lanes, _mm256_setzero_si256()};
    }
};

// ... decoded to per-chunk signs (SChunk::sign, any bytes whose sign is the value's), magnitudes
// and chunk scales.
struct SignedChunkDot : ScaleOnly {
    using Chunk = SChunk;
};

// Q4_K: fp16 d | fp16 dmin | scales[12] | qs[128]. M = sum_j m_j T_j (T_j = bs[2j] + bs[2j+1]).
struct Q4_KFields : ScaleAndMinTerms<ActK> {
    static constexpr size_t kBytes = 144;
    using Chunk = UChunk;
    struct Head {
        __m256i bytes;  // k4_scales_mins in both 128-bit lanes: the chunk multipliers by chunk_scale_u8
        __m128i mins8;  // int16 j = min(j)
        float d, dmin;
    };
    static inline Head head(const uint8_t *p) {
        const __m128i v = k4_scales_mins(p + 4);
        const __m128 dd = fp16x2(p);
        return {broadcast128(v), _mm_shuffle_epi8(v, mins_u16()), _mm_cvtss_f32(dd), lane<1>(dd)};
    }
    // bytes 8-15 zero-extended to int16: one vpshufb (no vpsrldq + vpmovzxbw)
    static inline __m128i mins_u16() { return _mm_setr_epi8(8, -1, 9, -1, 10, -1, 11, -1, 12, -1, 13, -1, 14, -1, 15, -1); }
    // chunk 2i / 2i + 1: the low / high nibbles of qs[32 i ..]
    template <int C>
    static inline UChunk chunk(const uint8_t *p, const Head &h) {
        const __m256i x = load256(p + 16 + 32 * (C / 2)), m4 = _mm256_set1_epi8(0x0F);
        return {move_bits<4 * (C % 2), 0>(x, m4), chunk_scale_u8(h.bytes, C)};
    }
    static inline Ints ints(const Head &h, __m256i lanes, const ActK &x) {
        return {lanes, _mm256_zextsi128_si256(_mm_madd_epi16(h.mins8, x.T))};  // m_{2i} T_{2i} + m_{2i+1} T_{2i+1}
    }
};
using Q4_K = SuperBlock<Q4_KFields>;

// Q5_K: fp16 d | fp16 dmin | scales[12] | qh[32] | qs[128]. Scales, mins and M as Q4_K's.
struct Q5_KFields : ScaleAndMinTerms<ActK> {
    static constexpr size_t kBytes = 176;
    using Chunk = UChunk;
    using Head = Q4_KFields::Head;
    static inline Head head(const uint8_t *p) { return Q4_KFields::head(p); }
    // chunk c: nibbles as Q4_K's (qs at 48), bit c of qh as bit 4
    template <int C>
    static inline UChunk chunk(const uint8_t *p, const Head &h) {
        const __m256i x = load256(p + 48 + 32 * (C / 2)), qh = load256(p + 16);
        const __m256i low = move_bits<4 * (C % 2), 0>(x, _mm256_set1_epi8(0x0F));
        return {_mm256_or_si256(low, move_bits<C, 4>(qh, _mm256_set1_epi8(0x10))), chunk_scale_u8(h.bytes, C)};
    }
    static inline Ints ints(const Head &h, __m256i lanes, const ActK &x) { return Q4_KFields::ints(h, lanes, x); }
};
using Q5_K = SuperBlock<Q5_KFields>;

// Q6_K: ql[128] | qh[64] | int8 scales[16] | fp16 d. Lanes from the unsigned q + 32 (0..63), the
// offset removed in integers: S = lanes - 32 sum_s sc_s bs[s].
struct Q6_KFields : OneTerm<ActK> {
    static constexpr size_t kBytes = 210;
    // The AVX-512 builds' token path (two blocks per step, simd/common.h token_row_pairs)
    // prefetches all 7 lines of the step's 420 bytes, not one per block: from DRAM the one-per-
    // block prefetch left Q6_K's block pairs 5-10% behind v1 on the Zen 5 VM, whose single-block
    // loop reads the same lines (docs/benchmarks.md "Token path under v2").
    static constexpr bool kTokenPairPrefetchEveryLine = true;
    using Chunk = UChunk;
    struct Head {
        __m256i scales16;  // scales16_of16
        __m256i scales;    // int16 t = sc_t
        float d;
    };
    static inline Head head(const uint8_t *p) {
        const __m128i s = load128(p + 192);
        return {scales16_of16(s), _mm256_cvtepi8_epi16(s), fp16(p + 208)};
    }
    // chunk 4 i + g: nibble g / 2 of ql[64 i + 32 (g % 2) ..] | bits 2g, 2g + 1 of qh[32 i ..] as bits 4, 5
    template <int C>
    static inline UChunk chunk(const uint8_t *p, const Head &h) {
        constexpr int i = C / 4, g = C % 4;
        const __m256i ql = load256(p + 64 * i + 32 * (g % 2)), qh = load256(p + 128 + 32 * i);
        const __m256i low = move_bits<4 * (g / 2), 0>(ql, _mm256_set1_epi8(0x0F));
        return {_mm256_or_si256(low, move_bits<2 * g, 4>(qh, _mm256_set1_epi8(0x30))), chunk_scale(h.scales16, C)};
    }
    static inline Ints ints(const Head &h, __m256i lanes, const ActK &x) {
        const __m256i off = _mm256_madd_epi16(h.scales, x.bs);
        return {_mm256_sub_epi32(lanes, _mm256_slli_epi32(off, 5)), _mm256_setzero_si256()};
    }
};
using Q6_K = SuperBlock<Q6_KFields>;

// Q2_K: scales[16] | qs[64] | fp16 d | fp16 dmin. M = sum_s m_s bs[s].
struct Q2_KFields : ScaleAndMinTerms<ActK> {
    static constexpr size_t kBytes = 84;
    using Chunk = UChunk;
    struct Head {
        __m256i scales16;  // scales16_of16
        __m256i mins16;    // int16 t = min_t
        float d, dmin;
    };
    static inline Head head(const uint8_t *p) {
        const __m128i s = load128(p), m4 = _mm_set1_epi8(0x0F);
        const __m128 dd = fp16x2(p + 80);
        return {scales16_of16(_mm_and_si128(s, m4)), _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(s, 4), m4)),
                _mm_cvtss_f32(dd), lane<1>(dd)};
    }
    // chunk 4 i + g: bits 2g, 2g + 1 of qs[32 i ..]
    template <int C>
    static inline UChunk chunk(const uint8_t *p, const Head &h) {
        const __m256i x = load256(p + 16 + 32 * (C / 4));
        return {move_bits<2 * (C % 4), 0>(x, _mm256_set1_epi8(0x03)), chunk_scale(h.scales16, C)};
    }
    static inline Ints ints(const Head &h, __m256i lanes, const ActK &x) {
        return {lanes, _mm256_madd_epi16(h.mins16, x.bs)};
    }
};
using Q2_K = SuperBlock<Q2_KFields>;

// Q3_K: hmask[32] | qs[64] | scales[12] | fp16 d. Signed quants -4..3 (a SET hmask bit means no
// offset), signed 6-bit scales; no min term. Decoded as u = q + 4 (0..7, pairs <= 2*7*127), the
// 4 removed from the int16 pair sums (OChunk).
struct Q3_KFields : ScaleOnly {
    static constexpr size_t kBytes = 110;
    static constexpr int kOffset = 4;
    using Chunk = OChunk<kOffset>;
    using Act = ActKOffset<kOffset>;
    static inline Act act(const uint8_t *a) { return act_k_offset<kOffset>(a); }
    struct Head {
        __m256i scales16;  // scales16_of16
        float d;
    };
    static inline Head head(const uint8_t *p) {
        // scale j = (low4_j | high2_j << 4) - 32: low4 from bytes 0-7 (lo nibble for j < 8, hi
        // for j >= 8), high2 from byte 8 + j % 4 at bit 2 (j / 4).
        const uint8_t *S = p + 96;
        const __m128i m4 = _mm_set1_epi8(0x0F);
        const __m128i l8 = _mm_loadl_epi64(reinterpret_cast<const __m128i *>(S));
        const __m128i low = _mm_unpacklo_epi64(_mm_and_si128(l8, m4), _mm_and_si128(_mm_srli_epi16(l8, 4), m4));
        uint32_t h;
        std::memcpy(&h, S + 8, 4);
        constexpr uint32_t k3 = 0x03030303;
        const __m128i high = _mm_setr_epi32(int32_t(h & k3), int32_t((h >> 2) & k3), int32_t((h >> 4) & k3),
                                            int32_t((h >> 6) & k3));
        const __m128i sc8 = _mm_sub_epi8(_mm_or_si128(low, _mm_slli_epi16(high, 4)), _mm_set1_epi8(32));
        return {scales16_of16(sc8), fp16(p + 108)};
    }
    // chunk c = 4 i + g: bits 2g, 2g + 1 of qs[32 i ..] | bit c of hmask as bit 2 (= q + 4)
    template <int C>
    static inline Chunk chunk(const uint8_t *p, const Head &h) {
        const __m256i x = load256(p + 32 + 32 * (C / 4)), hm = load256(p);
        const __m256i low = move_bits<2 * (C % 4), 0>(x, _mm256_set1_epi8(0x03));
        return {_mm256_or_si256(low, move_bits<C, 2>(hm, _mm256_set1_epi8(0x04))), chunk_scale(h.scales16, C)};
    }
};
using Q3_K = SuperBlock<Q3_KFields>;

// IQ4_XS: fp16 d | u16 scales_h | scales_l[4] | qs[128]; sub-block sb of 32: bytes 16 sb..,
// element r < 16 the low nibble of byte r, else the high nibble of byte r - 16; values from
// kvalues_iq4nl (-127..113); scales ls - 32. D = d * D_q8K.
struct IQ4_XSFields : SignedChunkDot {
    static constexpr size_t kBytes = 136;
    struct Head {
        __m256i scales16;  // scales16_of8
        float d;
    };
    static inline Head head(const uint8_t *p) { return {scales16_of8(scale_bytes(p)), fp16_lead(p)}; }
    static inline __m128i scale_bytes(const uint8_t *p) {  // bytes 0-7: ls_sb - 32
        // ls_sb = (nibble sb of scales_l | 2 bits sb of scales_h << 4) - 32, nibbles low first
        uint32_t sl;
        std::memcpy(&sl, p + 4, 4);
        // the 2-bit fields of scales_h spread to bits 4-5 of byte sb: 4 | 4, 2 | 2, 1 | 1 fields
        uint64_t high = load_u16(p + 2);
        high = (high | high << 24) & 0x000000FF000000FFull;
        high = (high | high << 12) & 0x000F000F000F000Full;
        high = ((high | high << 6) & 0x0303030303030303ull) << 4;
        const __m128i v = _mm_cvtsi32_si128(int32_t(sl)), m4 = _mm_set1_epi8(0x0F);
        const __m128i low = _mm_unpacklo_epi8(_mm_and_si128(v, m4), _mm_and_si128(_mm_srli_epi16(v, 4), m4));
        return _mm_sub_epi8(_mm_or_si128(low, _mm_cvtsi64_si128(int64_t(high))), _mm_set1_epi8(32));
    }
    template <int C>
    static inline SChunk chunk(const uint8_t *p, const Head &h) {
        const __m256i table = broadcast128(load128(kValuesIq4nl));
        const __m256i v = _mm256_shuffle_epi8(table, nibbles_lo_hi(p + 8 + 16 * C));
        return {v, _mm256_abs_epi8(v), chunk_scale(h.scales16, C)};
    }
};
using IQ4_XS = SuperBlock<IQ4_XSFields>;

// IQ3_S: fp16 d | qs[64] | qh[8] | signs[32] | scales[4]. Magnitudes (odd 1..15) from the grid,
// 4 per index; the explicit sign bits are moved onto the activation (q = magnitude, s = ±a).
// Scales ls = 1 + 2 s4. D = d * D_q8K.
struct IQ3_SFields : SignedChunkDot {
    static constexpr size_t kBytes = 110;
    struct Head {
        __m256i scales16;  // scales16_of8
        float d;
    };
    static inline Head head(const uint8_t *p) {
        // ls_sb = 1 + 2 * (nibble sb of scales[4]), nibbles low first
        uint32_t s4;
        std::memcpy(&s4, p + 106, 4);
        const __m128i v = _mm_cvtsi32_si128(int32_t(s4)), m4 = _mm_set1_epi8(0x0F);
        const __m128i nib = _mm_unpacklo_epi8(_mm_and_si128(v, m4), _mm_and_si128(_mm_srli_epi16(v, 4), m4));
        return {scales16_of8(_mm_add_epi8(_mm_add_epi8(nib, nib), _mm_set1_epi8(1))), fp16_lead(p)};
    }
    // chunk sb: the sign is +1 / -1 bytes
    template <int C>
    static inline SChunk chunk(const uint8_t *p, const Head &h) {
        const __m256i bytesel = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                                 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
        const __m256i bitsel = _mm256_set1_epi64x(int64_t(0x8040201008040201ull));
        const __m256i lane_shift = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), one32 = _mm256_set1_epi32(1);
        // grid index of group k: qs[8 sb + k] | bit k of qh[sb] << 8; one gather of 8 entries
        const __m256i lo = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(p + 2 + 8 * C)));
        const __m256i hi = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(p[66 + C]), lane_shift), one32);
        const __m256i idx = _mm256_or_si256(lo, _mm256_slli_epi32(hi, 8));
        const __m256i mag = _mm256_i32gather_epi32(reinterpret_cast<const int *>(kIq3sGrid), idx, 4);
        uint32_t bits;
        std::memcpy(&bits, p + 74 + 4 * C, 4);
        const __m256i sbytes = _mm256_shuffle_epi8(_mm256_set1_epi32(int32_t(bits)), bytesel);
        const __m256i neg = _mm256_cmpeq_epi8(_mm256_and_si256(sbytes, bitsel), bitsel);
        return {_mm256_or_si256(neg, _mm256_set1_epi8(1)), mag, chunk_scale(h.scales16, C)};
    }
};
using IQ3_S = SuperBlock<IQ3_SFields>;

}  // namespace memra::simd::MEMRA_SIMD_NS

// The AVX-512 build's chunk-pair forms of these formats (TokenLanes above) and their panels;
// the 256-bit builds' own token forms and their panels.
#ifdef MEMRA_SIMD_WIDE512
#include "simd/wide512_q8_K_act.h"
#else
#include "simd/token256_q8_K_act.h"
#include "simd/panels256_q8_K.h"
#endif
