// IQ3_S and IQ4_XS dots with Q8_K activations, ggml's AVX2 order (spec §5.2): the 32-element
// sub-block scales (IQ3_S: ls = 2 s4 + 1; IQ4_XS: ls - 32) multiply the int lanes in integers,
// then one fma per super-block with D = d * D_q8K.
#include "common/act_layout.h"
#include "common/block_fields.h"
#include "scalar/kernels.h"
#include "scalar/lanes.h"

namespace memra::scalar {

using namespace blocks;  // the block accessors

namespace {

template <typename Value, typename Scale32>
IntLanes iquant_lanes(const uint8_t *ablk, Value value, Scale32 scale32) {
    int8_t q[256];
    int32_t scale16[16];
    for (int i = 0; i < 256; ++i) q[i] = int8_t(value(i));
    for (int j = 0; j < 16; ++j) scale16[j] = scale32(j / 2);
    return superblock_lanes(q, q8_K_act::qs(ablk), scale16);
}

}  // namespace

float dot_iq3_s(const uint8_t *w, const void *x_q8_K, int32_t n) {
    FloatLanes acc;
    for (int b = 0; b < n / iq3_s::kElems; ++b) {
        const uint8_t *blk = w + size_t(b) * iq3_s::kBytes;
        const uint8_t *ablk = q8_K_act::block(x_q8_K, b);
        const IntLanes lanes = iquant_lanes(
            ablk,
            [blk](int i) {
                const int mag = iq3_s::magnitude(blk, i);
                return iq3_s::negative(blk, i) ? -mag : mag;
            },
            [blk](int sb) { return iq3_s::scale(blk, sb); });
        fma_lanes(acc, iq3_s::d(blk) * q8_K_act::d(ablk), lanes);
    }
    return hsum8(acc);
}

float dot_iq4_xs(const uint8_t *w, const void *x_q8_K, int32_t n) {
    FloatLanes acc;
    for (int b = 0; b < n / iq4_xs::kElems; ++b) {
        const uint8_t *blk = w + size_t(b) * iq4_xs::kBytes;
        const uint8_t *ablk = q8_K_act::block(x_q8_K, b);
        const IntLanes lanes = iquant_lanes(
            ablk, [blk](int i) { return iq4_xs::value(blk, i); },
            [blk](int sb) { return iq4_xs::scale(blk, sb); });
        fma_lanes(acc, iq4_xs::d(blk) * q8_K_act::d(ablk), lanes);
    }
    return hsum8(acc);
}

}  // namespace memra::scalar
