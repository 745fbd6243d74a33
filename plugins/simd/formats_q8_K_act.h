// Weight formats paired with Q8_K activations (the K-quants, IQ4_XS, IQ3_S): decode-and-dot
// written once over the ISA layer, in the order of scalar/dot_kquants.cpp and dot_iquants.cpp.
// Per super-block: the int lanes (sub-block scales multiplied in integers, Isa::dot4_scaled),
// ONE fma with D = D_q8K * d (same operand order as the scalar code), and each format's min or
// offset term exactly where the scalar code puts it.
//
// Operand ranges for vpmaddubsw, which every layer's dot4_scaled uses (pair sums must fit int16;
// activations are -127..127): Q4_K 0..15, Q5_K 0..31, Q6_K 0..63, Q2_K 0..3 unsigned; Q3_K
// |q| <= 4, IQ4_XS |v| <= 127 (pairs <= 32258), IQ3_S 1..15 with the sign moved onto the
// activation. Scales: int8-range multipliers (Q6_K's int8, the others 6 bits or less).
#pragma once

#include "common/tables.h"
#include "scalar/block_fields.h"
#include "simd/common.h"

namespace memra::simd::MEMRA_SIMD_NS {

namespace q8k {  // f32 d | int8 qs[256] | int16 bsums[16]
constexpr size_t kBytes = 292;
inline const uint8_t *qs(const uint8_t *a) { return a + 4; }
inline __m256i bsums(const uint8_t *a) { return load256(a + 260); }  // 16 x int16
}  // namespace q8k

struct Acc8 {
    __m256 acc;
};

// One Q8_K activation block as the steps read it, prepared once per block and shared by all the
// rows of a tile: D, bsums (16 x int16) and T_j = bs[2j] + bs[2j+1] (8 x int16, |T| <= 4064).
// Formats take what they use; the compiler drops the rest.
struct ActK {
    const uint8_t *a;
    float D;
    __m256i bs;
    __m128i T;
};
inline ActK act_k(const uint8_t *a) {
    const __m256i bs = q8k::bsums(a);
    return {a, f32(a), bs, _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1))};
}

// Q4_K / Q5_K: the 12-byte packing of eight 6-bit scales and mins (get_scale_min_k4) unpacked
// as ggml's AVX2 kernels do, into bytes 0-7 = scales, 8-15 = mins; then sc[c] = scale c for
// both halves of chunk c, mins8 = int16 j -> min(j).
inline void k4_scales_mins(const uint8_t *S, __m256i sc[8], __m128i &mins8) {
    uint32_t u[4];
    std::memcpy(u, S, 12);
    constexpr uint32_t kmask1 = 0x3f3f3f3f, kmask2 = 0x0f0f0f0f, kmask3 = 0x03030303;
    u[3] = ((u[2] >> 4) & kmask2) | (((u[1] >> 6) & kmask3) << 4);
    const uint32_t uaux = u[1] & kmask1;
    u[1] = (u[2] & kmask2) | (((u[0] >> 6) & kmask3) << 4);
    u[2] = uaux;
    u[0] &= kmask1;
    const __m128i v = _mm_setr_epi32(int32_t(u[0]), int32_t(u[1]), int32_t(u[2]), int32_t(u[3]));
    const __m256i bytes = broadcast128(v);
    for (int c = 0; c < 8; ++c) sc[c] = scales_from_bytes(bytes, c, c);
    mins8 = _mm_cvtepu8_epi16(_mm_srli_si128(v, 8));
}

// The int lanes of a super-block from 8 chunks of 32 quants and their scales (the ISA layer's
// loop: 256-bit per chunk, or, where the layer has it and Wide, 512-bit per chunk pair; Wide is
// set on the rows path, whose decoded blocks sit in memory by then).
template <bool Wide>
inline __m256i chunk_lanes(const __m256i q[8], const __m256i sc[8], const uint8_t *a) {
    return Isa::template scaled_lanes8<Wide>(q, sc, reinterpret_cast<const int8_t *>(q8k::qs(a)));
}

// The same with signed quants: |q| against sign(q) * a.
template <bool Wide>
inline __m256i signed_chunk_lanes(const __m256i q[8], const __m256i aq[8], const __m256i sc[8], const uint8_t *a) {
    return Isa::template signed_scaled_lanes8<Wide>(q, aq, sc, reinterpret_cast<const int8_t *>(q8k::qs(a)));
}

// What every format paired with Q8_K activations shares: 256-element super-blocks against one
// Q8_K block, read as ActK.
struct Q8KPaired {
    static constexpr int kElems = 256;
    static constexpr size_t kActBytes = q8k::kBytes;
    using Act = ActK;
    static inline Act act(const uint8_t *a) { return act_k(a); }
};

// One 8-lane f32 accumulator, summed at the end (formats whose mins, if any, share its lanes).
struct OneAccumulator {
    using Acc = Acc8;
    static inline Acc init() { return {_mm256_setzero_ps()}; }
    static inline float finish(const Acc &s) { return hsum8(s.acc); }
};

// Formats decoded to per-chunk signs (Block::sign, any bytes whose sign is the value's),
// magnitudes (Block::mag), chunk scales and one super-block scale d, with no min term: one fma
// of D = d * D_a per super-block.
struct SignedChunkDot : Q8KPaired, OneAccumulator {
    template <bool Wide, class Block>
    static inline void step(Acc8 &s, const Block &b, const ActK &x) {
        const __m256i lanes = signed_chunk_lanes<Wide>(b.sign, b.mag, b.sc, x.a);
        s.acc = _mm256_fmadd_ps(_mm256_set1_ps(b.d * x.D), _mm256_cvtepi32_ps(lanes), s.acc);
    }
};

// Q4_K: fp16 d | fp16 dmin | scales[12] | qs[128]. Mins in a 4-lane accumulator:
// accm[m] = fma((-D) dmin, m_{2m} T_{2m} + m_{2m+1} T_{2m+1}), result hsum8(acc) + hsum4(accm).
struct Q4_K : Q8KPaired {
    static constexpr size_t kBytes = 144;
    struct Block {
        __m256i q[8], sc[8];
        __m128i mins8;  // int16 j = min(j)
        float d, dmin;
    };
    struct Acc {
        __m256 acc;
        __m128 accm;
    };
    static inline Acc init() { return {_mm256_setzero_ps(), _mm_setzero_ps()}; }
    static inline void decode(const uint8_t *p, Block &b) {
        b.d = fp16(p);
        b.dmin = fp16(p + 2);
        k4_scales_mins(p + 4, b.sc, b.mins8);
        const __m256i m4 = _mm256_set1_epi8(0x0F);
        for (int c = 0; c < 4; ++c) {
            const __m256i x = load256(p + 16 + 32 * c);
            b.q[2 * c] = _mm256_and_si256(x, m4);
            b.q[2 * c + 1] = _mm256_and_si256(_mm256_srli_epi16(x, 4), m4);
        }
    }
    template <bool Wide>
    static inline void step(Acc &s, const Block &b, const Act &x) {
        const uint8_t *a = x.a;
        const float D = x.D;
        const __m128i pm = _mm_madd_epi16(b.mins8, x.T);  // m_{2m} T_{2m} + m_{2m+1} T_{2m+1}
        s.accm = _mm_fmadd_ps(_mm_set1_ps((-D) * b.dmin), _mm_cvtepi32_ps(pm), s.accm);
        const __m256i lanes = chunk_lanes<Wide>(b.q, b.sc, a);
        s.acc = _mm256_fmadd_ps(_mm256_set1_ps(D * b.d), _mm256_cvtepi32_ps(lanes), s.acc);
    }
    static inline float finish(const Acc &s) { return hsum8(s.acc) + hsum4(s.accm); }
};

// Q5_K: fp16 d | fp16 dmin | scales[12] | qh[32] | qs[128]. Mins as one integer
// M = sum_t m_{t/2} bs[t] into a scalar summs = fma((-D) dmin, M, summs).
struct Q5_K : Q8KPaired {
    static constexpr size_t kBytes = 176;
    struct Block {
        __m256i q[8], sc[8];
        __m128i mins8;  // int16 j = min(j)
        float d, dmin;
    };
    struct Acc {
        __m256 acc;
        float summs;
    };
    static inline Acc init() { return {_mm256_setzero_ps(), 0.0f}; }
    static inline void decode(const uint8_t *p, Block &b) {
        b.d = fp16(p);
        b.dmin = fp16(p + 2);
        k4_scales_mins(p + 4, b.sc, b.mins8);
        const __m256i m4 = _mm256_set1_epi8(0x0F), one = _mm256_set1_epi8(1);
        const __m256i qh = load256(p + 16);
        for (int c = 0; c < 4; ++c) {
            const __m256i x = load256(p + 48 + 32 * c);
            const __m256i h0 = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * c), one);
            const __m256i h1 = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * c + 1), one);
            b.q[2 * c] = _mm256_or_si256(_mm256_and_si256(x, m4), _mm256_slli_epi16(h0, 4));
            b.q[2 * c + 1] =
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(x, 4), m4), _mm256_slli_epi16(h1, 4));
        }
    }
    static inline int32_t hsum_i32(__m128i s) {
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
        return _mm_cvtsi128_si32(s);
    }
    template <bool Wide>
    static inline void step(Acc &s, const Block &b, const Act &x) {
        const uint8_t *a = x.a;
        const float D = x.D;
        const int32_t M = hsum_i32(_mm_madd_epi16(b.mins8, x.T));  // sum_j m_j T_j
        s.summs = _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss((-D) * b.dmin), _mm_set_ss(float(M)), _mm_set_ss(s.summs)));
        const __m256i lanes = chunk_lanes<Wide>(b.q, b.sc, a);
        s.acc = _mm256_fmadd_ps(_mm256_set1_ps(D * b.d), _mm256_cvtepi32_ps(lanes), s.acc);
    }
    static inline float finish(const Acc &s) { return hsum8(s.acc) + s.summs; }
};

// Q6_K: ql[128] | qh[64] | int8 scales[16] | fp16 d. Lanes from the unsigned q + 32 (0..63), the
// offset removed per lane in integers: lane_k -= 32 (sc_{2k} bs[2k] + sc_{2k+1} bs[2k+1]).
struct Q6_K : Q8KPaired, OneAccumulator {
    static constexpr size_t kBytes = 210;
    struct Block {
        __m256i q[8], sc[8];
        __m256i scales16;  // int16 t = sc_t
        float d;
    };
    static inline void decode(const uint8_t *p, Block &b) {
        b.d = fp16(p + 208);
        const __m256i bytes = broadcast128(load128(p + 192));
        for (int c = 0; c < 8; ++c) b.sc[c] = scales_from_bytes(bytes, 2 * c, 2 * c + 1);
        b.scales16 = _mm256_cvtepi8_epi16(load128(p + 192));
        const __m256i m4 = _mm256_set1_epi8(0x0F), m2 = _mm256_set1_epi8(0x03);
        for (int h = 0; h < 2; ++h) {
            const __m256i ql0 = load256(p + 64 * h), ql1 = load256(p + 64 * h + 32);
            const __m256i qh = load256(p + 128 + 32 * h);
            const __m256i low[4] = {_mm256_and_si256(ql0, m4), _mm256_and_si256(ql1, m4),
                                    _mm256_and_si256(_mm256_srli_epi16(ql0, 4), m4),
                                    _mm256_and_si256(_mm256_srli_epi16(ql1, 4), m4)};
            for (int g = 0; g < 4; ++g) {
                const __m256i high = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * g), m2);
                b.q[4 * h + g] = _mm256_or_si256(low[g], _mm256_slli_epi16(high, 4));
            }
        }
    }
    template <bool Wide>
    static inline void step(Acc &s, const Block &b, const Act &x) {
        const uint8_t *a = x.a;
        __m256i lanes = chunk_lanes<Wide>(b.q, b.sc, a);
        const __m256i off = _mm256_madd_epi16(b.scales16, x.bs);
        lanes = _mm256_sub_epi32(lanes, _mm256_slli_epi32(off, 5));
        s.acc = _mm256_fmadd_ps(_mm256_set1_ps(x.D * b.d), _mm256_cvtepi32_ps(lanes), s.acc);
    }
};

// Q2_K: scales[16] | qs[64] | fp16 d | fp16 dmin. Before the scale fma of the same super-block,
// the mins into the same accumulator: lane k += (-D) dmin (m_{2k} bs[2k] + m_{2k+1} bs[2k+1]).
struct Q2_K : Q8KPaired, OneAccumulator {
    static constexpr size_t kBytes = 84;
    struct Block {
        __m256i q[8], sc[8];
        __m256i mins16;  // int16 t = min_t
        float d, dmin;
    };
    static inline void decode(const uint8_t *p, Block &b) {
        b.d = fp16(p + 80);
        b.dmin = fp16(p + 82);
        const __m128i s = load128(p);
        const __m256i bytes = broadcast128(_mm_and_si128(s, _mm_set1_epi8(0x0F)));
        for (int c = 0; c < 8; ++c) b.sc[c] = scales_from_bytes(bytes, 2 * c, 2 * c + 1);
        b.mins16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(s, 4), _mm_set1_epi8(0x0F)));
        const __m256i m2 = _mm256_set1_epi8(0x03);
        for (int h = 0; h < 2; ++h) {
            const __m256i x = load256(p + 16 + 32 * h);
            for (int g = 0; g < 4; ++g) b.q[4 * h + g] = _mm256_and_si256(_mm256_srli_epi16(x, 2 * g), m2);
        }
    }
    template <bool Wide>
    static inline void step(Acc &s, const Block &b, const Act &x) {
        const uint8_t *a = x.a;
        const float D = x.D;
        const __m256i mins = _mm256_madd_epi16(b.mins16, x.bs);
        s.acc = _mm256_fmadd_ps(_mm256_set1_ps((-D) * b.dmin), _mm256_cvtepi32_ps(mins), s.acc);
        const __m256i lanes = chunk_lanes<Wide>(b.q, b.sc, a);
        s.acc = _mm256_fmadd_ps(_mm256_set1_ps(D * b.d), _mm256_cvtepi32_ps(lanes), s.acc);
    }
};

// Q3_K: hmask[32] | qs[64] | scales[12] | fp16 d. Signed quants -4..3 (a SET hmask bit means no
// offset), signed 6-bit scales; no min term.
struct Q3_K : SignedChunkDot {
    static constexpr size_t kBytes = 110;
    struct Block {
        __m256i sign[8], mag[8], sc[8];  // sign: the quants themselves
        float d;
    };
    static inline void decode(const uint8_t *p, Block &b) {
        b.d = fp16(p + 108);
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
        const __m256i bytes = broadcast128(sc8);
        for (int c = 0; c < 8; ++c) b.sc[c] = scales_from_bytes(bytes, 2 * c, 2 * c + 1);
        const __m256i m2 = _mm256_set1_epi8(0x03), one = _mm256_set1_epi8(1), four = _mm256_set1_epi8(4);
        const __m256i hm = load256(p);
        for (int h = 0; h < 2; ++h) {
            const __m256i x = load256(p + 32 + 32 * h);
            for (int g = 0; g < 4; ++g) {
                const __m256i low = _mm256_and_si256(_mm256_srli_epi16(x, 2 * g), m2);
                const __m256i hb = _mm256_and_si256(_mm256_srli_epi16(hm, 4 * h + g), one);
                const __m256i q = _mm256_sub_epi8(_mm256_or_si256(low, _mm256_slli_epi16(hb, 2)), four);
                b.sign[4 * h + g] = q;
                b.mag[4 * h + g] = _mm256_abs_epi8(q);
            }
        }
    }
};

// IQ4_XS: fp16 d | u16 scales_h | scales_l[4] | qs[128]; sub-block sb of 32: bytes 16 sb..,
// element r < 16 the low nibble of byte r, else the high nibble of byte r - 16; values from
// kvalues_iq4nl (-127..113); scales ls - 32. D = d * D_q8K.
struct IQ4_XS : SignedChunkDot {
    static constexpr size_t kBytes = 136;
    struct Block {
        __m256i sign[8], mag[8], sc[8];  // sign: the values themselves
        float d;
    };
    static inline void decode(const uint8_t *p, Block &b) {
        b.d = fp16(p);
        const __m256i table = _mm256_broadcastsi128_si256(load128(kValuesIq4nl));
        // ls_sb = (nibble sb of scales_l | 2 bits sb of scales_h << 4) - 32, nibbles low first
        uint32_t sl;
        std::memcpy(&sl, p + 4, 4);
        const uint32_t sh = load_u16(p + 2);
        uint64_t high = 0;
        for (int sb = 0; sb < 8; ++sb) high |= uint64_t((sh >> (2 * sb)) & 3) << (8 * sb + 4);
        const __m128i v = _mm_cvtsi32_si128(int32_t(sl)), m4 = _mm_set1_epi8(0x0F);
        const __m128i low = _mm_unpacklo_epi8(_mm_and_si128(v, m4), _mm_and_si128(_mm_srli_epi16(v, 4), m4));
        const __m128i sc8 = _mm_sub_epi8(_mm_or_si128(low, _mm_cvtsi64_si128(int64_t(high))), _mm_set1_epi8(32));
        const __m256i bytes = broadcast128(sc8);
        for (int sb = 0; sb < 8; ++sb) {
            b.sc[sb] = scales_from_bytes(bytes, sb, sb);
            b.sign[sb] = _mm256_shuffle_epi8(table, nibbles_lo_hi(load128(p + 8 + 16 * sb)));
            b.mag[sb] = _mm256_abs_epi8(b.sign[sb]);
        }
    }
};

// IQ3_S: fp16 d | qs[64] | qh[8] | signs[32] | scales[4]. Magnitudes (odd 1..15) from the grid,
// 4 per index; the explicit sign bits are moved onto the activation (q = magnitude, s = ±a).
// Scales ls = 1 + 2 s4. D = d * D_q8K.
struct IQ3_S : SignedChunkDot {
    static constexpr size_t kBytes = 110;
    struct Block {
        __m256i mag[8], sign[8], sc[8];  // sign: +1 / -1 bytes
        float d;
    };
    static inline void decode(const uint8_t *p, Block &b) {
        b.d = fp16(p);
        const __m256i bytesel = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                                 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
        const __m256i bitsel = _mm256_set1_epi64x(int64_t(0x8040201008040201ull));
        const __m256i lane_shift = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), one32 = _mm256_set1_epi32(1);
        // ls_sb = 1 + 2 * (nibble sb of scales[4]), nibbles low first
        uint32_t s4;
        std::memcpy(&s4, p + 106, 4);
        const __m128i v = _mm_cvtsi32_si128(int32_t(s4)), m4 = _mm_set1_epi8(0x0F);
        const __m128i nib = _mm_unpacklo_epi8(_mm_and_si128(v, m4), _mm_and_si128(_mm_srli_epi16(v, 4), m4));
        const __m256i bytes = broadcast128(_mm_add_epi8(_mm_add_epi8(nib, nib), _mm_set1_epi8(1)));
        for (int sb = 0; sb < 8; ++sb) {
            b.sc[sb] = scales_from_bytes(bytes, sb, sb);
            // grid index of group k: qs[8 sb + k] | bit k of qh[sb] << 8; one gather of 8 entries
            const __m256i lo = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(p + 2 + 8 * sb)));
            const __m256i hi = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(p[66 + sb]), lane_shift), one32);
            const __m256i idx = _mm256_or_si256(lo, _mm256_slli_epi32(hi, 8));
            b.mag[sb] = _mm256_i32gather_epi32(reinterpret_cast<const int *>(kIq3sGrid), idx, 4);
            uint32_t bits;
            std::memcpy(&bits, p + 74 + 4 * sb, 4);
            const __m256i sbytes = _mm256_shuffle_epi8(_mm256_set1_epi32(int32_t(bits)), bytesel);
            const __m256i neg = _mm256_cmpeq_epi8(_mm256_and_si256(sbytes, bitsel), bitsel);
            b.sign[sb] = _mm256_or_si256(neg, _mm256_set1_epi8(1));
        }
    }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
