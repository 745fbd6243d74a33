// The K-quants (spec §4.4-4.8): a 256-value super-block of 16- or 32-value sub-blocks. Each
// encoder fits every sub-block's scale (and min) in float with scale_search.h, quantizes those to
// the format's small integer scales against one fp16 super-scale, then re-derives every value's
// level from the scales as the decoder will see them (fp16-rounded d times the integer scale), so
// the scale rounding is compensated where it can be.
#include <cmath>
#include <cstring>

#include "block_encoders.h"
#include "common/bytes.h"
#include "common/fp_convert.h"
#include "scale_search.h"

namespace memra::quantize {
namespace {

constexpr int kSuper = 256;

// Integer sub-block scales against one positive super-scale: code_j = round(v_j / d) in
// [0, top], d = max_j v_j / top. Returns the fp16 bits of d; the codes go to codes[].
uint16_t unsigned_scales(const float *v, int count, int top, int *codes) {
    float max = 0;
    for (int j = 0; j < count; ++j) max = std::fmax(max, v[j]);
    const float d = max / float(top);
    const uint16_t d16 = f32_to_fp16(d);
    const float dq = fp16_to_f32(d16);
    for (int j = 0; j < count; ++j) codes[j] = dq > 0 ? clamp_int(nearest_int(v[j] / dq), 0, top) : 0;
    return d16;
}

// Signed sub-block scales: the scale of largest magnitude maps to -bottom (Q3_K: -32, Q6_K: -128),
// the others to round(v_j / d) in [-bottom, bottom - 1].
uint16_t signed_scales(const float *v, int count, int bottom, int *codes) {
    const float max = signed_absmax(v, count);
    const float d = max / -float(bottom);
    const uint16_t d16 = f32_to_fp16(d);
    const float dq = fp16_to_f32(d16);
    for (int j = 0; j < count; ++j) codes[j] = dq != 0 ? clamp_int(nearest_int(v[j] / dq), -bottom, bottom - 1) : 0;
    return d16;
}

// Levels of affine sub-blocks from the decoded scales: q = round((x + dmin*m) / (d*sc)).
void affine_levels(const float *x, int sub, float d, float dmin, const int *sc, const int *mn, int qmax, int *q) {
    for (int i = 0; i < kSuper; ++i) {
        const float dl = d * float(sc[i / sub]), ml = dmin * float(mn[i / sub]);
        q[i] = dl > 0 ? clamp_int(nearest_int((x[i] + ml) / dl), 0, qmax) : 0;
    }
}

// Levels of symmetric sub-blocks from the decoded scales: q = round(x / (d*sc)).
void symmetric_levels(const float *x, int sub, float d, const int *sc, int nmax, int *q) {
    for (int i = 0; i < kSuper; ++i) {
        const float dl = d * float(sc[i / sub]);
        q[i] = dl != 0 ? clamp_int(nearest_int(x[i] / dl), -nmax, nmax - 1) : 0;
    }
}

// Fits each sub-block of `sub` values with fit_affine; then 6- or 4-bit scales and mins.
struct AffineBlock {
    int sc[16], mn[16], q[kSuper];
    uint16_t d16, dmin16;
};
AffineBlock affine_block(const float *x, int sub, int qmax, int scale_top) {
    AffineBlock b;
    const int count = kSuper / sub;
    float scales[16], mins[16];
    for (int j = 0; j < count; ++j) {
        const Affine a = fit_affine(x + sub * j, sub, qmax, b.q + sub * j);
        scales[j] = a.scale;
        mins[j] = a.min;
    }
    b.d16 = unsigned_scales(scales, count, scale_top, b.sc);
    b.dmin16 = unsigned_scales(mins, count, scale_top, b.mn);
    affine_levels(x, sub, fp16_to_f32(b.d16), fp16_to_f32(b.dmin16), b.sc, b.mn, qmax, b.q);
    return b;
}

struct SymmetricBlock {
    int sc[16], q[kSuper];
    uint16_t d16;
};
SymmetricBlock symmetric_block(const float *x, int nmax, int scale_bottom) {
    SymmetricBlock b;
    float scales[16];
    for (int j = 0; j < 16; ++j) scales[j] = fit_symmetric(x + 16 * j, 16, nmax, b.q + 16 * j);
    b.d16 = signed_scales(scales, 16, scale_bottom, b.sc);
    symmetric_levels(x, 16, fp16_to_f32(b.d16), b.sc, nmax, b.q);
    return b;
}

// §4.6 get_scale_min_k4, inverted: eight 6-bit scales and mins into 12 bytes.
void pack_k4_scales(const int *sc, const int *mn, uint8_t *S) {
    for (int j = 0; j < 4; ++j) {
        S[j] = uint8_t((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
        S[j + 4] = uint8_t((mn[j] & 63) | ((mn[j + 4] >> 4) << 6));
        S[j + 8] = uint8_t((sc[j + 4] & 15) | ((mn[j + 4] & 15) << 4));
    }
}

// The Q4_K / Q5_K low nibbles: chunk c = i/64 of 32 bytes, low nibble for its first 32 values.
void pack_k4_low4(const int *q, uint8_t *qs) {
    std::memset(qs, 0, 128);
    for (int i = 0; i < kSuper; ++i)
        qs[32 * (i / 64) + i % 32] |= uint8_t((q[i] & 15) << ((i % 64) < 32 ? 0 : 4));
}

// Q2_K / Q3_K 2-bit fields: value i at byte 32 h + l, bits 2g (h = i/128, g = (i%128)/32, l = i%32).
void pack_2bit(const int *q, uint8_t *qs) {
    std::memset(qs, 0, 64);
    for (int i = 0; i < kSuper; ++i) qs[32 * (i / 128) + i % 32] |= uint8_t((q[i] & 3) << (2 * ((i % 128) / 32)));
}

}  // namespace

// §4.4: 16 sub-blocks of 16, q in 0..3, 4-bit scales and mins.
void encode_q2_K(const float *x, uint8_t *out) {
    const AffineBlock b = affine_block(x, 16, 3, 15);
    for (int s = 0; s < 16; ++s) out[s] = uint8_t(b.sc[s] | b.mn[s] << 4);
    pack_2bit(b.q, out + 16);
    store_u16(out + 80, b.d16);
    store_u16(out + 82, b.dmin16);
}

// §4.5: 16 sub-blocks of 16, q in -4..3 stored as q + 4 (low 2 bits + hmask bit), signed 6-bit
// scales stored as sc + 32.
void encode_q3_K(const float *x, uint8_t *out) {
    const SymmetricBlock b = symmetric_block(x, 4, 32);
    int u[kSuper];
    for (int i = 0; i < kSuper; ++i) u[i] = b.q[i] + 4;
    std::memset(out, 0, 32);
    for (int i = 0; i < kSuper; ++i)
        if (u[i] & 4) out[i % 32] |= uint8_t(1u << (4 * (i / 128) + (i % 128) / 32));  // hmask bit k = i/32
    pack_2bit(u, out + 32);
    uint8_t *S = out + 96;
    std::memset(S, 0, 12);
    for (int j = 0; j < 16; ++j) {
        const int v = b.sc[j] + 32;
        S[j % 8] |= uint8_t((v & 15) << (j < 8 ? 0 : 4));
        S[8 + j % 4] |= uint8_t((v >> 4) << (2 * (j / 4)));
    }
    store_u16(out + 108, b.d16);
}

// §4.6: 8 sub-blocks of 32, q in 0..15, 6-bit scales and mins.
void encode_q4_K(const float *x, uint8_t *out) {
    const AffineBlock b = affine_block(x, 32, 15, 63);
    store_u16(out, b.d16);
    store_u16(out + 2, b.dmin16);
    pack_k4_scales(b.sc, b.mn, out + 4);
    pack_k4_low4(b.q, out + 16);
}

// §4.7: as Q4_K with q in 0..31; the fifth bit of value i is bit i/32 of qh[i%32].
void encode_q5_K(const float *x, uint8_t *out) {
    const AffineBlock b = affine_block(x, 32, 31, 63);
    store_u16(out, b.d16);
    store_u16(out + 2, b.dmin16);
    pack_k4_scales(b.sc, b.mn, out + 4);
    std::memset(out + 16, 0, 32);
    for (int i = 0; i < kSuper; ++i) out[16 + i % 32] |= uint8_t((b.q[i] >> 4) << (i / 32));
    pack_k4_low4(b.q, out + 48);
}

// §4.8: 16 sub-blocks of 16, q in -32..31 stored as q + 32 (4 low bits in ql, 2 high in qh),
// int8 scales.
void encode_q6_K(const float *x, uint8_t *out) {
    const SymmetricBlock b = symmetric_block(x, 32, 128);
    std::memset(out, 0, 192);
    for (int i = 0; i < kSuper; ++i) {
        const int u = b.q[i] + 32, h = i / 128, g = (i % 128) / 32, l = i % 32;
        out[64 * h + 32 * (g % 2) + l] |= uint8_t((u & 15) << (g < 2 ? 0 : 4));
        out[128 + 32 * h + l] |= uint8_t((u >> 4) << (2 * g));
    }
    for (int j = 0; j < 16; ++j) out[192 + j] = uint8_t(int8_t(b.sc[j]));
    store_u16(out + 208, b.d16);
}

}  // namespace memra::quantize
