// IQ3_S and IQ4_XS dots with Q8_K activations in the canonical order v2 (spec §5.3): per
// super-block the exact integer S = sum over the 32-element sub-blocks of (IQ3_S: ls = 1 + 2 s4;
// IQ4_XS: ls - 32) * sum value * a, and one fma with D = d * D_a.
#include "common/act_layout.h"
#include "common/block_fields.h"
#include "scalar/block_order.h"
#include "scalar/kernels.h"

namespace memra::scalar {

using namespace blocks;  // the block accessors

namespace {

template <typename Value, typename Scale32>
int32_t iquant_sum(const uint8_t *ablk, Value value, Scale32 scale32) {
    const int8_t *a = q8_K_act::qs(ablk);
    int32_t S = 0;
    for (int sb = 0; sb < 8; ++sb) {
        int8_t q[32];
        for (int i = 0; i < 32; ++i) q[i] = int8_t(value(32 * sb + i));
        S += scale32(sb) * int_dot(q, a + 32 * sb, 32);
    }
    return S;
}

}  // namespace

float dot_iq3_s(const uint8_t *w, const void *x_q8_K, int32_t n) {
    float acc = 0.0f;
    for (int b = 0; b < n / iq3_s::kElems; ++b) {
        const uint8_t *blk = w + size_t(b) * iq3_s::kBytes;
        const uint8_t *ablk = q8_K_act::block(x_q8_K, b);
        const int32_t S = iquant_sum(
            ablk,
            [blk](int i) {
                const int mag = iq3_s::magnitude(blk, i);
                return iq3_s::negative(blk, i) ? -mag : mag;
            },
            [blk](int sb) { return iq3_s::scale(blk, sb); });
        acc = fma_block(acc, S, iq3_s::d(blk) * q8_K_act::d(ablk));
    }
    return acc;
}

float dot_iq4_xs(const uint8_t *w, const void *x_q8_K, int32_t n) {
    float acc = 0.0f;
    for (int b = 0; b < n / iq4_xs::kElems; ++b) {
        const uint8_t *blk = w + size_t(b) * iq4_xs::kBytes;
        const uint8_t *ablk = q8_K_act::block(x_q8_K, b);
        const int32_t S = iquant_sum(ablk, [blk](int i) { return iq4_xs::value(blk, i); },
                                     [blk](int sb) { return iq4_xs::scale(blk, sb); });
        acc = fma_block(acc, S, iq4_xs::d(blk) * q8_K_act::d(ablk));
    }
    return acc;
}

}  // namespace memra::scalar
