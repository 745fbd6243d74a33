// K-quant dots with Q8_K activations, in ggml's AVX2 order (spec §5.2): per super-block the int
// lanes of lanes.h (sub-block scales multiplied in integers) and ONE fma with D = D_q8K * d; the
// min / offset terms exactly where and how the AVX2 kernels apply them, because that placement
// decides the rounding.
#include "common/act_layout.h"
#include "common/block_fields.h"
#include "scalar/kernels.h"
#include "scalar/lanes.h"

namespace memra::scalar {

using namespace blocks;  // the block accessors

namespace {

// The integer content of one super-block as the lanes consume it.
struct SuperBlock {
    int8_t q[256];
    int32_t scale16[16];  // one scale per 16-element sub-block
};

template <typename Quant, typename Scale16>
SuperBlock gather(Quant quant, Scale16 scale16) {
    SuperBlock s;
    for (int i = 0; i < 256; ++i) s.q[i] = int8_t(quant(i));
    for (int j = 0; j < 16; ++j) s.scale16[j] = scale16(j);
    return s;
}

IntLanes lanes_of(const SuperBlock &s, const uint8_t *ablk) {
    return superblock_lanes(s.q, q8_K_act::qs(ablk), s.scale16);
}

}  // namespace

// Before the scale fma of the same super-block, the mins: lane k gets
// fma((-D)*dmin, m_{2k} bs[2k] + m_{2k+1} bs[2k+1]). Quants are the unsigned 0..3.
float dot_q2_K(const uint8_t *w, const void *x_q8_K, int32_t n) {
    FloatLanes acc;
    for (int b = 0; b < n / q2_K::kElems; ++b) {
        const uint8_t *blk = w + size_t(b) * q2_K::kBytes;
        const uint8_t *ablk = q8_K_act::block(x_q8_K, b);
        const float D = q8_K_act::d(ablk);
        IntLanes mins;
        for (int k = 0; k < kLanes; ++k)
            mins.v[k] = q2_K::min(blk, 2 * k) * q8_K_act::bsum(ablk, 2 * k) +
                        q2_K::min(blk, 2 * k + 1) * q8_K_act::bsum(ablk, 2 * k + 1);
        fma_lanes(acc, (-D) * q2_K::dmin(blk), mins);
        const SuperBlock s = gather([blk](int i) { return q2_K::quant(blk, i); },
                                    [blk](int j) { return q2_K::scale(blk, j); });
        fma_lanes(acc, D * q2_K::d(blk), lanes_of(s, ablk));
    }
    return hsum8(acc);
}

// Signed quants -4..3 and signed 6-bit scales; no separate min term.
float dot_q3_K(const uint8_t *w, const void *x_q8_K, int32_t n) {
    FloatLanes acc;
    for (int b = 0; b < n / q3_K::kElems; ++b) {
        const uint8_t *blk = w + size_t(b) * q3_K::kBytes;
        const uint8_t *ablk = q8_K_act::block(x_q8_K, b);
        const SuperBlock s = gather([blk](int i) { return q3_K::quant(blk, i); },
                                    [blk](int j) { return q3_K::scale(blk, j); });
        fma_lanes(acc, q8_K_act::d(ablk) * q3_K::d(blk), lanes_of(s, ablk));
    }
    return hsum8(acc);
}

// Mins in a separate 4-lane accumulator: accm[m] = fma((-D)*dmin, m_{2m} T_{2m} + m_{2m+1} T_{2m+1})
// with T_j = bs[2j] + bs[2j+1] (the two 16-sums of sub-block j); result hsum8(acc) + hsum4(accm).
float dot_q4_K(const uint8_t *w, const void *x_q8_K, int32_t n) {
    FloatLanes acc;
    float accm[4] = {};
    for (int b = 0; b < n / q4_K::kElems; ++b) {
        const uint8_t *blk = w + size_t(b) * q4_K::kBytes;
        const uint8_t *ablk = q8_K_act::block(x_q8_K, b);
        const float D = q8_K_act::d(ablk);
        auto T = [ablk](int j) { return q8_K_act::bsum(ablk, 2 * j) + q8_K_act::bsum(ablk, 2 * j + 1); };
        const float dmin = (-D) * q4_K::dmin(blk);
        for (int m = 0; m < 4; ++m) {
            const int32_t p = q4_K::min(blk, 2 * m) * T(2 * m) + q4_K::min(blk, 2 * m + 1) * T(2 * m + 1);
            accm[m] = std::fma(dmin, float(p), accm[m]);
        }
        const SuperBlock s = gather([blk](int i) { return q4_K::quant(blk, i); },
                                    [blk](int j) { return q4_K::scale(blk, j / 2); });
        fma_lanes(acc, D * q4_K::d(blk), lanes_of(s, ablk));
    }
    return hsum8(acc) + hsum4(accm);
}

// Mins as one integer M = sum_t m_{t/2} bs[t] per super-block, into a scalar
// summs = fma((-D)*dmin, M, summs); result hsum8(acc) + summs.
float dot_q5_K(const uint8_t *w, const void *x_q8_K, int32_t n) {
    FloatLanes acc;
    float summs = 0.0f;
    for (int b = 0; b < n / q5_K::kElems; ++b) {
        const uint8_t *blk = w + size_t(b) * q5_K::kBytes;
        const uint8_t *ablk = q8_K_act::block(x_q8_K, b);
        const float D = q8_K_act::d(ablk);
        int32_t M = 0;
        for (int t = 0; t < 16; ++t) M += q5_K::min(blk, t / 2) * q8_K_act::bsum(ablk, t);
        summs = std::fma((-D) * q5_K::dmin(blk), float(M), summs);
        const SuperBlock s = gather([blk](int i) { return q5_K::quant(blk, i); },
                                    [blk](int j) { return q5_K::scale(blk, j / 2); });
        fma_lanes(acc, D * q5_K::d(blk), lanes_of(s, ablk));
    }
    return hsum8(acc) + summs;
}

// Lanes from the unsigned q + 32 (0..63); the offset is then removed per lane in integers via the
// bsums of chunk k: lane_k -= 32 (sc_{2k} bs[2k] + sc_{2k+1} bs[2k+1]). The total is the exact
// signed sum, but its split over lanes (and so the rounding) is the AVX2 kernel's.
float dot_q6_K(const uint8_t *w, const void *x_q8_K, int32_t n) {
    FloatLanes acc;
    for (int b = 0; b < n / q6_K::kElems; ++b) {
        const uint8_t *blk = w + size_t(b) * q6_K::kBytes;
        const uint8_t *ablk = q8_K_act::block(x_q8_K, b);
        const SuperBlock s = gather([blk](int i) { return q6_K::quant(blk, i) + 32; },
                                    [blk](int j) { return q6_K::scale(blk, j); });
        IntLanes lanes = lanes_of(s, ablk);
        for (int k = 0; k < kLanes; ++k)
            lanes.v[k] -= 32 * (s.scale16[2 * k] * q8_K_act::bsum(ablk, 2 * k) +
                                s.scale16[2 * k + 1] * q8_K_act::bsum(ablk, 2 * k + 1));
        fma_lanes(acc, q8_K_act::d(ablk) * q6_K::d(blk), lanes);
    }
    return hsum8(acc);
}

}  // namespace memra::scalar
