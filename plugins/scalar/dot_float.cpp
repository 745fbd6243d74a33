// F32 and BF16 dots. ggml gives no single reference order for these (its result depends on the
// SIMD width of its build), so the project defines one per format.
//
// F32: 64 lanes, lane k accumulating the elements i with i % 64 == k, in ascending i, each by one
// std::fma(w[i], x[i], lane); then the lanes are folded by halves (lane k += lane k + 32, then
// + 16, then + 8) and the remaining 8 summed by hsum8. A SIMD port gets this with eight 8-lane
// accumulators (one vfmadd each per 64 elements), which also gives a single row eight
// independent chains. 64 lanes is what ggml's AVX-512 build accumulates in (4 x 16), so the
// rounding error matches ggml's (with 8 lanes a 4096-wide F32 dot erred 2.1e-7 relative against
// ggml's 1.4e-7).
//
// BF16: exactly what ggml computes on a CPU with AVX512_BF16 (ggml_vec_dot_bf16: two vdpbf16ps
// accumulators over each 64 elements), so that a kernel using that instruction is bit-identical
// to this one, and to ggml. 32 lanes; lane L takes the element pairs (2p, 2p + 1) with
// p % 32 == L, in ascending p, each pair as vdpbf16ps does it (Intel SDM: "FP32 FMA with DAZ in,
// FTZ out and RNE rounding", MXCSR ignored): lane = fma(w[2p+1], x[2p+1], lane), then
// lane = fma(w[2p], x[2p], lane), every input subnormal read as zero of its sign and every
// subnormal result flushed to zero of its sign. Lanes 0-15 and 16-31 are each reduced as GCC's
// _mm512_reduce_add_ps does (by halves: k += k + 8, then hsum8), r1 and r2; elements past the
// last whole 64 are ggml's tail: their products (exact, unflushed) added in double to
// (double)r1 + r2, the total rounded once to float. The products of bf16 values are exact in
// f32 (8-bit significands), so each fma rounds only the sum. Checked against the instruction on
// an AMD Zen 5 and an Intel Sapphire Rapids (plugins/tests/test_dots.cpp).
#include <cmath>

#include "common/bytes.h"
#include "common/fp_convert.h"
#include "scalar/kernels.h"
#include "scalar/lanes.h"

namespace memra::scalar {

namespace {

constexpr int kFloatDotLanes = 64;

float fold_float_lanes(float acc[kFloatDotLanes]) {
    for (int width = kFloatDotLanes / 2; width >= kLanes; width /= 2)
        for (int k = 0; k < width; ++k) acc[k] += acc[k + width];
    FloatLanes last;
    for (int k = 0; k < kLanes; ++k) last.v[k] = acc[k];
    return hsum8(last);
}

template <typename LoadW, typename LoadX>
float dot_elementwise(int32_t n, LoadW load_w, LoadX load_x) {
    float acc[kFloatDotLanes] = {};
    for (int32_t i = 0; i < n; ++i)
        acc[i % kFloatDotLanes] = std::fma(load_w(i), load_x(i), acc[i % kFloatDotLanes]);
    return fold_float_lanes(acc);
}

constexpr int kBf16PairLanes = 32;

// DAZ / FTZ as vdpbf16ps applies them: a subnormal becomes a zero of the same sign.
float flush_subnormal(float v) {
    const uint32_t u = f32_bits(v);
    return (u & 0x7F800000u) == 0 ? f32_from_bits(u & 0x80000000u) : v;
}

float fma_daz_ftz(float a, float b, float c) {
    return flush_subnormal(std::fma(flush_subnormal(a), flush_subnormal(b), flush_subnormal(c)));
}

// GCC's _mm512_reduce_add_ps over 16 lanes: 16 -> 8 by halves, then hsum8.
float reduce16(const float *lanes) {
    FloatLanes half;
    for (int k = 0; k < kLanes; ++k) half.v[k] = lanes[k + 8] + lanes[k];
    return hsum8(half);
}

}  // namespace

float dot_f32(const uint8_t *w, const void *x_f32, int32_t n) {
    const uint8_t *x = static_cast<const uint8_t *>(x_f32);
    return dot_elementwise(
        n, [w](int32_t i) { return load_f32(w + 4 * size_t(i)); },
        [x](int32_t i) { return load_f32(x + 4 * size_t(i)); });
}

float dot_bf16(const uint8_t *w, const void *x_bf16, int32_t n) {
    const uint8_t *x = static_cast<const uint8_t *>(x_bf16);
    auto value = [](const uint8_t *p, int32_t i) { return bf16_to_f32(load_u16(p + 2 * size_t(i))); };
    float acc[kBf16PairLanes] = {};
    const int32_t n64 = n - n % (2 * kBf16PairLanes);
    for (int32_t i = 0; i < n64; i += 2) {
        float &lane = acc[(i / 2) % kBf16PairLanes];
        lane = fma_daz_ftz(value(w, i + 1), value(x, i + 1), lane);
        lane = fma_daz_ftz(value(w, i), value(x, i), lane);
    }
    double sum = 0.0;  // as ggml's: 0.0 + -0.0 is +0.0
    sum += double(reduce16(acc));
    sum += double(reduce16(acc + 16));
    for (int32_t i = n64; i < n; ++i) sum += double(value(w, i) * value(x, i));
    return float(sum);
}

}  // namespace memra::scalar
