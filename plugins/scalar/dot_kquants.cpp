// K-quant dots with Q8_K activations in the canonical order v2 (spec §5.3): per 256-element
// super-block the exact integer S = sum over sub-blocks of (sub-block scale) * sum q a, one fma
// with D = D_a * d; Q2_K, Q4_K and Q5_K then their exact min sum M, one fma with
// N = -(D_a * dmin).
#include "common/act_layout.h"
#include "common/block_fields.h"
#include "scalar/block_order.h"
#include "scalar/kernels.h"

namespace memra::scalar {

using namespace blocks;  // the block accessors

namespace {

// S of one super-block: sum over its sub-blocks of `Sub` elements of scale(sub-block) * the
// exact sum of quant(i) * a_i.
template <int Sub, typename Quant, typename Scale>
int32_t scaled_sum(const uint8_t *ablk, Quant quant, Scale scale) {
    const int8_t *a = q8_K_act::qs(ablk);
    int32_t S = 0;
    for (int s = 0; s < 256 / Sub; ++s) {
        int8_t q[Sub];
        for (int i = 0; i < Sub; ++i) q[i] = int8_t(quant(Sub * s + i));
        S += scale(s) * int_dot(q, a + Sub * s, Sub);
    }
    return S;
}

// The 16-element sums bs[t] of the activation, weighted: sum_t min(t / PerMin) * bs[t] (every
// 16-element sum meets the min of its sub-block).
template <int PerMin, typename Min>
int32_t min_sum(const uint8_t *ablk, Min min) {
    int32_t M = 0;
    for (int t = 0; t < 16; ++t) M += min(t / PerMin) * q8_K_act::bsum(ablk, t);
    return M;
}

}  // namespace

// Q2_K: 16-element sub-blocks, quants 0..3; M = sum_s m_s bs[s].
float dot_q2_K(const uint8_t *w, const void *x_q8_K, int32_t n) {
    float acc = 0.0f;
    for (int b = 0; b < n / q2_K::kElems; ++b) {
        const uint8_t *blk = w + size_t(b) * q2_K::kBytes;
        const uint8_t *ablk = q8_K_act::block(x_q8_K, b);
        const float D_a = q8_K_act::d(ablk);
        const int32_t S = scaled_sum<16>(ablk, [blk](int i) { return q2_K::quant(blk, i); },
                                         [blk](int s) { return q2_K::scale(blk, s); });
        acc = fma_block(acc, S, D_a * q2_K::d(blk));
        acc = fma_block(acc, min_sum<1>(ablk, [blk](int s) { return q2_K::min(blk, s); }), -(D_a * q2_K::dmin(blk)));
    }
    return acc;
}

// Q3_K: 16-element sub-blocks, signed quants -4..3 and signed 6-bit scales; no min term.
float dot_q3_K(const uint8_t *w, const void *x_q8_K, int32_t n) {
    float acc = 0.0f;
    for (int b = 0; b < n / q3_K::kElems; ++b) {
        const uint8_t *blk = w + size_t(b) * q3_K::kBytes;
        const uint8_t *ablk = q8_K_act::block(x_q8_K, b);
        const int32_t S = scaled_sum<16>(ablk, [blk](int i) { return q3_K::quant(blk, i); },
                                         [blk](int j) { return q3_K::scale(blk, j); });
        acc = fma_block(acc, S, q8_K_act::d(ablk) * q3_K::d(blk));
    }
    return acc;
}

// Q4_K and Q5_K: 32-element sub-blocks j with 6-bit scales and mins; M = sum_j m_j (bs[2j] + bs[2j+1]).
template <typename Quant, typename Scale, typename Min>
float dot_k4(const uint8_t *w, size_t block_bytes, float (*d)(const uint8_t *), float (*dmin)(const uint8_t *),
             const void *x_q8_K, int32_t n, Quant quant, Scale scale, Min min) {
    float acc = 0.0f;
    for (int b = 0; b < n / 256; ++b) {
        const uint8_t *blk = w + size_t(b) * block_bytes;
        const uint8_t *ablk = q8_K_act::block(x_q8_K, b);
        const float D_a = q8_K_act::d(ablk);
        const int32_t S = scaled_sum<32>(ablk, [&](int i) { return quant(blk, i); }, [&](int j) { return scale(blk, j); });
        acc = fma_block(acc, S, D_a * d(blk));
        acc = fma_block(acc, min_sum<2>(ablk, [&](int j) { return min(blk, j); }), -(D_a * dmin(blk)));
    }
    return acc;
}

float dot_q4_K(const uint8_t *w, const void *x_q8_K, int32_t n) {
    return dot_k4(w, q4_K::kBytes, q4_K::d, q4_K::dmin, x_q8_K, n, q4_K::quant, q4_K::scale, q4_K::min);
}

float dot_q5_K(const uint8_t *w, const void *x_q8_K, int32_t n) {
    return dot_k4(w, q5_K::kBytes, q5_K::d, q5_K::dmin, x_q8_K, n, q5_K::quant, q5_K::scale, q5_K::min);
}

// Q6_K: 16-element sub-blocks, signed quants -32..31 and int8 scales; no min term.
float dot_q6_K(const uint8_t *w, const void *x_q8_K, int32_t n) {
    float acc = 0.0f;
    for (int b = 0; b < n / q6_K::kElems; ++b) {
        const uint8_t *blk = w + size_t(b) * q6_K::kBytes;
        const uint8_t *ablk = q8_K_act::block(x_q8_K, b);
        const int32_t S = scaled_sum<16>(ablk, [blk](int i) { return q6_K::quant(blk, i); },
                                         [blk](int s) { return q6_K::scale(blk, s); });
        acc = fma_block(acc, S, q8_K_act::d(ablk) * q6_K::d(blk));
    }
    return acc;
}

}  // namespace memra::scalar
