// F32 and BF16 (one value a block), and the single-scale formats: Q4_0, Q8_0 (ggml's reference
// quantizers, spec §3.1 (B) and §4.2), MXFP4 (ggml's quantize_row_mxfp4_ref, §4.14) and NVFP4
// (one UE4M3 scale per 16 values, chosen among the representable bytes).
#include <cmath>
#include <cstring>

#include "block_encoders.h"
#include "common/block_fields.h"
#include "common/bytes.h"
#include "common/fp_convert.h"
#include "common/tables.h"
#include "scale_search.h"

namespace memra::quantize {

// §4.1: the value itself (quantize_row copies whole F32 rows at once).
void encode_f32(const float *x, uint8_t *out) { std::memcpy(out, x, sizeof(float)); }

// §4.1: round to nearest even (spec §2.3), as ggml's from_float.
void encode_bf16(const float *x, uint8_t *out) { store_u16(out, f32_to_bf16(*x)); }

// §4.2, as ggml's quantize_row_q4_0_ref: the value of largest magnitude maps to code 0 (-8), so d
// takes the opposite sign of that value; the codes are x/d + 8 rounded half up, capped at 15.
void encode_q4_0(const float *x, uint8_t *out) {
    const float max = signed_absmax(x, 32);
    const float d = max / -8.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    store_u16(out, f32_to_fp16(d));
    for (int j = 0; j < 16; ++j) {
        auto code = [&](float v) { return uint8_t(std::fmin(15.0f, std::floor(v * id + 8.5f))); };
        out[2 + j] = uint8_t(code(x[j]) | code(x[j + 16]) << 4);
    }
}

// §3.1 (B), ggml's quantize_row_q8_0_ref: d = amax / 127, codes round(x / d), ties away from 0.
void encode_q8_0(const float *x, uint8_t *out) {
    float amax = 0;
    for (int i = 0; i < 32; ++i) amax = std::fmax(amax, std::fabs(x[i]));
    const float d = amax / 127.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    store_u16(out, f32_to_fp16(d));
    for (int i = 0; i < 32; ++i) out[2 + i] = uint8_t(int8_t(std::round(x[i] * id)));
}

// §4.14, as ggml's quantize_row_mxfp4_ref: e = floor(log2(amax)) - 2 + 127 (0 for an all-zero
// block, and for amax below 2^-125, where ggml's cast would leave uint8's range), so the top level
// 12 * 2^(e-128) = 1.5 * 2^floor(log2 amax): values above it clip. Each value takes the code book
// entry nearest x / scale, the first of equals (ggml's best_index_mxfp4, a scan over all 16).
void encode_mxfp4(const float *x, uint8_t *out) {
    float amax = 0;
    for (int i = 0; i < 32; ++i) amax = std::fmax(amax, std::fabs(x[i]));
    const float e = amax > 0 ? std::floor(std::log2(amax)) - 2.0f + 127.0f : 0.0f;
    const uint8_t byte = e > 0 ? uint8_t(e) : 0;
    const float d = blocks::mxfp4::e8m0_half(byte);
    auto code = [&](float v) {
        int best = 0;
        float best_err = std::fabs(float(kValuesFp4[0]) * d - v);
        for (int i = 1; i < 16; ++i) {
            const float err = std::fabs(float(kValuesFp4[i]) * d - v);
            if (err < best_err) {
                best = i;
                best_err = err;
            }
        }
        return uint8_t(best);
    };
    out[0] = byte;
    for (int j = 0; j < 16; ++j) out[1 + j] = uint8_t(code(x[j]) | code(x[j + 16]) << 4);
}

namespace {

// The squared error of coding x[0..16) with the decoded scale `half` (= ue4m3_half of a byte):
// each value takes the nearest of the doubled E2M1 levels kValuesFp4 * half. Writes the codes.
float nvfp4_subblock(const float *x, float half, uint8_t *codes) {
    static constexpr int8_t kMagnitudes[8] = {0, 1, 2, 3, 4, 6, 8, 12};  // kValuesFp4[0..7]
    float err = 0;
    for (int r = 0; r < 16; ++r) {
        const int m = half > 0 ? nearest_level(kMagnitudes, 8, std::fabs(x[r]) / half) : 0;
        codes[r] = uint8_t(m | (x[r] < 0 ? 8 : 0));  // code 8 + m is -magnitude
        const float e = std::fabs(x[r]) - float(kMagnitudes[m]) * half;
        err += e * e;
    }
    return err;
}

// The smallest scale byte (1..0x7E, where the decode is increasing) whose level 12 reaches amax:
// nothing clips. Binary search over the monotonic decode.
uint8_t covering_scale_byte(float amax) {
    int lo = 1, hi = 0x7E;
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (12.0f * ue4m3_half(uint8_t(mid)) >= amax) hi = mid; else lo = mid + 1;
    }
    return uint8_t(lo);
}

}  // namespace

// §4.13: four sub-blocks of 16, each with a UE4M3 scale byte. For each, the covering byte and the
// one below it (which clips the largest value a little but codes the rest more finely) are both
// tried; the smaller squared error wins. Bit 7 is left clear (ggml ignores it).
void encode_nvfp4(const float *x, uint8_t *out) {
    for (int s = 0; s < 4; ++s) {
        const float *xs = x + 16 * s;
        float amax = 0;
        for (int r = 0; r < 16; ++r) amax = std::fmax(amax, std::fabs(xs[r]));
        uint8_t byte = 0, codes[16] = {};
        if (amax > 0) {
            byte = covering_scale_byte(amax);
            float err = nvfp4_subblock(xs, ue4m3_half(byte), codes);
            if (byte > 1) {
                uint8_t lower[16];
                if (nvfp4_subblock(xs, ue4m3_half(uint8_t(byte - 1)), lower) < err) {
                    --byte;
                    for (int r = 0; r < 16; ++r) codes[r] = lower[r];
                }
            }
        }
        out[s] = byte;
        for (int t = 0; t < 8; ++t) out[4 + 8 * s + t] = uint8_t(codes[t] | codes[t + 8] << 4);
    }
}

}  // namespace memra::quantize
