// F32 and BF16 dots. ggml gives no reference order for these (its result depends on the SIMD
// width of the build), so the project defines one, in the same 8-lane shape as the quantized
// dots: lane k accumulates the elements i with i % 8 == k, in ascending i, each by one
// std::fma(w[i], x[i], lane); the result is hsum8 of the lanes. A 256-bit SIMD port gets this
// by one vfmadd per 8 consecutive elements and ggml's hsum. For BF16, both operands are widened
// to f32 and their product is exact (8-bit x 8-bit significands), so the fma rounds only the sum.
#include <cmath>

#include "common/bytes.h"
#include "common/fp_convert.h"
#include "scalar/kernels.h"
#include "scalar/lanes.h"

namespace memra::scalar {

namespace {

template <typename LoadW, typename LoadX>
float dot_elementwise(int32_t n, LoadW load_w, LoadX load_x) {
    FloatLanes acc;
    for (int32_t i = 0; i < n; ++i)
        acc.v[i % kLanes] = std::fma(load_w(i), load_x(i), acc.v[i % kLanes]);
    return hsum8(acc);
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
