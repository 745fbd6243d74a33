// Dots of the formats paired with Q8_0 activations (Q4_0, Q8_0, MXFP4, NVFP4), in ggml's AVX2 order
// (spec §5.2): per 32-element block one fma of the int lanes with the block's scale.
#include "common/act_layout.h"
#include "common/block_fields.h"
#include "scalar/kernels.h"
#include "scalar/lanes.h"

namespace memra::scalar {

using namespace blocks;  // the block accessors

namespace {

// Q4_0 and Q8_0: an fp16 d and 32 integer quants per block; D_block = d_w * d_a.
template <size_t BlockBytes, float (*D)(const uint8_t *), int (*Quant)(const uint8_t *, int)>
float dot_block32(const uint8_t *w, const void *xq, int32_t n) {
    FloatLanes acc;
    for (int b = 0; b < n / 32; ++b) {
        const uint8_t *blk = w + size_t(b) * BlockBytes;
        const uint8_t *ablk = q8_0_act::block(xq, b);
        int8_t q[32];
        for (int i = 0; i < 32; ++i) q[i] = int8_t(Quant(blk, i));
        fma_lanes(acc, D(blk) * q8_0_act::d(ablk), group_lanes(q, q8_0_act::qs(ablk)));
    }
    return hsum8(acc);
}

}  // namespace

float dot_q4_0(const uint8_t *w, const void *x_q8_0, int32_t n) {
    return dot_block32<q4_0::kBytes, q4_0::d, q4_0::quant>(w, x_q8_0, n);
}

float dot_q8_0(const uint8_t *w, const void *x_q8_0, int32_t n) {
    return dot_block32<q8_0::kBytes, q8_0::d, q8_0::quant>(w, x_q8_0, n);
}

// MXFP4 as ggml_vec_dot_mxfp4_q8_0 (spec §5.2): blocks in pairs, the even block of each pair into
// acc1, the odd one into acc2, each one fma with D = d_a * e8m0_half(e); then hsum8(acc1 + acc2)
// (lane-wise add first). An odd last block is the scalar tail: sumf = fma(D, (float)S, sumf)
// with S its whole integer sum.
float dot_mxfp4(const uint8_t *w, const void *x_q8_0, int32_t n) {
    const int nb = n / mxfp4::kElems;
    auto block = [&](int b, float &d, IntLanes &lanes) {
        const uint8_t *blk = w + size_t(b) * mxfp4::kBytes;
        const uint8_t *ablk = q8_0_act::block(x_q8_0, b);
        int8_t q[32];
        for (int i = 0; i < 32; ++i) q[i] = int8_t(mxfp4::value(blk, i));
        d = q8_0_act::d(ablk) * mxfp4::scale(blk);
        lanes = group_lanes(q, q8_0_act::qs(ablk));
    };
    FloatLanes acc1, acc2;
    int b = 0;
    for (; b + 1 < nb; b += 2) {
        float d;
        IntLanes lanes;
        block(b, d, lanes);
        fma_lanes(acc1, d, lanes);
        block(b + 1, d, lanes);
        fma_lanes(acc2, d, lanes);
    }
    FloatLanes sum;
    for (int k = 0; k < kLanes; ++k) sum.v[k] = acc1.v[k] + acc2.v[k];
    float sumf = hsum8(sum);
    if (b < nb) {
        float d;
        IntLanes lanes;
        block(b, d, lanes);
        int32_t s = 0;
        for (int k = 0; k < kLanes; ++k) s += lanes.v[k];
        sumf = std::fma(d, float(s), sumf);
    }
    return sumf;
}

// NVFP4 block b (64 values) pairs with Q8_0 blocks 2b and 2b+1. For each half h one fma into the
// same accumulator: lanes 0-3 are sub-block 2h, lanes 4-7 sub-block 2h+1, each lane scaled by
// ue4m3_half(d[s]) * d_a(2b+h).
float dot_nvfp4(const uint8_t *w, const void *x_q8_0, int32_t n) {
    FloatLanes acc;
    for (int b = 0; b < n / nvfp4::kElems; ++b) {
        const uint8_t *blk = w + size_t(b) * nvfp4::kBytes;
        for (int h = 0; h < 2; ++h) {
            const uint8_t *ablk = q8_0_act::block(x_q8_0, 2 * b + h);
            int8_t q[32];
            for (int j = 0; j < 32; ++j) q[j] = int8_t(nvfp4::value(blk, 32 * h + j));
            FloatLanes scale;
            for (int k = 0; k < kLanes; ++k)
                scale.v[k] = nvfp4::scale(blk, 2 * h + k / 4) * q8_0_act::d(ablk);
            fma_lanes(acc, scale, group_lanes(q, q8_0_act::qs(ablk)));
        }
    }
    return hsum8(acc);
}

}  // namespace memra::scalar
