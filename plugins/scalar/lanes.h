// The canonical float accumulation shape shared by every dot product (formats spec §5.2, ggml's
// x86 AVX2 kernels): eight f32 accumulator lanes; for each 32-element group, int32 lane k holds
// the exact sum over elements 4k..4k+3; one fused multiply-add (single rounding) per block with
// that block's scale; a fixed horizontal sum at the end. SIMD plugins reproduce exactly this.
#pragma once

#include <cmath>
#include <cstdint>

namespace memra::scalar {

constexpr int kLanes = 8;

struct IntLanes {
    int32_t v[kLanes] = {};
};

struct FloatLanes {
    float v[kLanes] = {};
};

// Lane k = sum_{t<4} w[4k+t] * a[4k+t] over one 32-element group (exact int32).
inline IntLanes group_lanes(const int8_t *w, const int8_t *a) {
    IntLanes r;
    for (int k = 0; k < kLanes; ++k)
        for (int t = 0; t < 4; ++t) r.v[k] += int32_t(w[4 * k + t]) * int32_t(a[4 * k + t]);
    return r;
}

// The int lanes of a 256-element super-block with one scale per 16-element sub-block (formats
// with 32-element sub-blocks pass each scale twice): lane k = sum over the eight 32-element
// chunks c of scale16[2c + k/4] * group lane k of chunk c. Lanes 0-3 of a chunk are its first 16
// elements, lanes 4-7 its second 16, which is why the scale index is 2c + k/4.
inline IntLanes superblock_lanes(const int8_t *w, const int8_t *a, const int32_t scale16[16]) {
    IntLanes r;
    for (int c = 0; c < 8; ++c) {
        const IntLanes g = group_lanes(w + 32 * c, a + 32 * c);
        for (int k = 0; k < kLanes; ++k) r.v[k] += scale16[2 * c + k / 4] * g.v[k];
    }
    return r;
}

// acc[k] = fma(scale, (float)lanes[k], acc[k]).
inline void fma_lanes(FloatLanes &acc, float scale, const IntLanes &lanes) {
    for (int k = 0; k < kLanes; ++k) acc.v[k] = std::fma(scale, float(lanes.v[k]), acc.v[k]);
}

// Per-lane scales (NVFP4: lanes 0-3 and 4-7 belong to different sub-blocks).
inline void fma_lanes(FloatLanes &acc, const FloatLanes &scale, const IntLanes &lanes) {
    for (int k = 0; k < kLanes; ++k)
        acc.v[k] = std::fma(scale.v[k], float(lanes.v[k]), acc.v[k]);
}

// ggml's hsum_float_8: r_j = acc[j+4] + acc[j], then (r0 + r2) + (r1 + r3).
inline float hsum8(const FloatLanes &acc) {
    float r[4];
    for (int j = 0; j < 4; ++j) r[j] = acc.v[j + 4] + acc.v[j];
    return (r[0] + r[2]) + (r[1] + r[3]);
}

// The 4-lane analogue used for Q4_K's min accumulator: (m0 + m2) + (m1 + m3).
inline float hsum4(const float m[4]) { return (m[0] + m[2]) + (m[1] + m[3]); }

}  // namespace memra::scalar
