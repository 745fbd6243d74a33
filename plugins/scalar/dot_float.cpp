// F32 and BF16 dots. ggml gives no reference order for these (its result depends on the SIMD
// width of the build), so the project defines one: 64 lanes, lane k accumulating the elements
// i with i % 64 == k, in ascending i, each by one std::fma(w[i], x[i], lane); then the lanes are
// folded by halves (lane k += lane k + 32, then + 16, then + 8) and the remaining 8 summed by
// hsum8. A SIMD port gets this with eight 8-lane accumulators (one vfmadd each per 64
// elements), which also gives a single row eight independent chains. 64 lanes is what ggml's
// AVX-512 build accumulates in (4 x 16), so the rounding error matches ggml's (with 8 lanes a
// 4096-wide F32 dot erred 2.1e-7 relative against ggml's 1.4e-7). For BF16, both operands are
// widened to f32 and their product is exact (8-bit x 8-bit significands), so the fma rounds only
// the sum.
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

}  // namespace

float dot_f32(const uint8_t *w, const void *x_f32, int32_t n) {
    const uint8_t *x = static_cast<const uint8_t *>(x_f32);
    return dot_elementwise(
        n, [w](int32_t i) { return load_f32(w + 4 * size_t(i)); },
        [x](int32_t i) { return load_f32(x + 4 * size_t(i)); });
}

float dot_bf16(const uint8_t *w, const void *x_bf16, int32_t n) {
    const uint8_t *x = static_cast<const uint8_t *>(x_bf16);
    return dot_elementwise(
        n, [w](int32_t i) { return bf16_to_f32(load_u16(w + 2 * size_t(i))); },
        [x](int32_t i) { return bf16_to_f32(load_u16(x + 2 * size_t(i))); });
}

}  // namespace memra::scalar
