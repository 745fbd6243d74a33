// Dots of the formats paired with Q8_0 activations (Q4_0, Q8_0, MXFP4, NVFP4) in the canonical
// order v2 (spec §5.3): per 32-element block (NVFP4: per 16-element sub-block) the exact integer
// sum S and one fma with D = (the weight's scale) * d_a.
#include "common/act_layout.h"
#include "common/block_fields.h"
#include "scalar/block_order.h"
#include "scalar/kernels.h"

namespace memra::scalar {

using namespace blocks;  // the block accessors

namespace {

// A 32-element block format with one scale per block: S = sum q * a, D = scale(w) * d_a.
template <size_t BlockBytes, float (*Scale)(const uint8_t *), int (*Quant)(const uint8_t *, int)>
float dot_block32(const uint8_t *w, const void *xq, int32_t n) {
    float acc = 0.0f;
    for (int b = 0; b < n / 32; ++b) {
        const uint8_t *blk = w + size_t(b) * BlockBytes;
        const uint8_t *ablk = q8_0_act::block(xq, b);
        int8_t q[32];
        for (int i = 0; i < 32; ++i) q[i] = int8_t(Quant(blk, i));
        acc = fma_block(acc, int_dot(q, q8_0_act::qs(ablk), 32), Scale(blk) * q8_0_act::d(ablk));
    }
    return acc;
}

int mxfp4_value(const uint8_t *b, int i) { return mxfp4::value(b, i); }

}  // namespace

// Q4_0: D = d_w * d_a, S = sum (q - 8) a.
float dot_q4_0(const uint8_t *w, const void *x_q8_0, int32_t n) {
    return dot_block32<q4_0::kBytes, q4_0::d, q4_0::quant>(w, x_q8_0, n);
}

// Q8_0: D = d_w * d_a, S = sum q a.
float dot_q8_0(const uint8_t *w, const void *x_q8_0, int32_t n) {
    return dot_block32<q8_0::kBytes, q8_0::d, q8_0::quant>(w, x_q8_0, n);
}

// MXFP4: D = e8m0_half(e) * d_a, S = sum kvalues_fp4[c] a.
float dot_mxfp4(const uint8_t *w, const void *x_q8_0, int32_t n) {
    return dot_block32<mxfp4::kBytes, mxfp4::scale, mxfp4_value>(w, x_q8_0, n);
}

// NVFP4 block b (64 values) pairs with Q8_0 blocks 2b and 2b + 1: per 16-element sub-block s in
// order, S = sum kvalues_fp4[c] a and D = ue4m3_half(d[s]) * d_a of Q8_0 block 2b + s / 2.
float dot_nvfp4(const uint8_t *w, const void *x_q8_0, int32_t n) {
    float acc = 0.0f;
    for (int b = 0; b < n / nvfp4::kElems; ++b) {
        const uint8_t *blk = w + size_t(b) * nvfp4::kBytes;
        for (int s = 0; s < 4; ++s) {
            const uint8_t *ablk = q8_0_act::block(x_q8_0, 2 * b + s / 2);
            int8_t q[16];
            for (int i = 0; i < 16; ++i) q[i] = int8_t(nvfp4::value(blk, 16 * s + i));
            const int32_t S = int_dot(q, q8_0_act::qs(ablk) + 16 * (s % 2), 16);
            acc = fma_block(acc, S, nvfp4::scale(blk, s) * q8_0_act::d(ablk));
        }
    }
    return acc;
}

}  // namespace memra::scalar
