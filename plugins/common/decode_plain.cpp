// Decoders of the element-wise and 32/64-element block formats (spec §4.1-4.3, §4.13, §4.14). Float
// arithmetic exactly as written there: one rounding per operation, no contraction
// (-ffp-contract=off), so the values are bit-identical to ggml's dequantizers.
#include <cstring>

#include "common/bytes.h"
#include "common/fp_convert.h"
#include "common/block_fields.h"
#include "common/decode.h"

namespace memra::blocks {

void dequantize_row_f32(const uint8_t *row, int32_t n, float *out) {
    std::memcpy(out, row, size_t(n) * sizeof(float));
}

void dequantize_row_bf16(const uint8_t *row, int32_t n, float *out) {
    for (int32_t i = 0; i < n; ++i) out[i] = bf16_to_f32(load_u16(row + 2 * size_t(i)));
}

// y[i] = float(code - 8) * d
void dequantize_row_q4_0(const uint8_t *row, int32_t n, float *out) {
    for (int32_t b = 0; b < n / q4_0::kElems; ++b, out += q4_0::kElems) {
        const uint8_t *blk = row + size_t(b) * q4_0::kBytes;
        const float d = q4_0::d(blk);
        for (int i = 0; i < q4_0::kElems; ++i) out[i] = float(q4_0::quant(blk, i)) * d;
    }
}

// y[i] = float(qs[i]) * d
void dequantize_row_q8_0(const uint8_t *row, int32_t n, float *out) {
    for (int32_t b = 0; b < n / q8_0::kElems; ++b, out += q8_0::kElems) {
        const uint8_t *blk = row + size_t(b) * q8_0::kBytes;
        const float d = q8_0::d(blk);
        for (int i = 0; i < q8_0::kElems; ++i) out[i] = float(q8_0::quant(blk, i)) * d;
    }
}

// y[i] = float(kvalues_fp4[code]) * e8m0_half(e)
void dequantize_row_mxfp4(const uint8_t *row, int32_t n, float *out) {
    for (int32_t b = 0; b < n / mxfp4::kElems; ++b, out += mxfp4::kElems) {
        const uint8_t *blk = row + size_t(b) * mxfp4::kBytes;
        const float d = mxfp4::scale(blk);
        for (int i = 0; i < mxfp4::kElems; ++i) out[i] = float(mxfp4::value(blk, i)) * d;
    }
}

// y[i] = float(kvalues_fp4[code]) * ue4m3_half(d[i / 16])
void dequantize_row_nvfp4(const uint8_t *row, int32_t n, float *out) {
    for (int32_t b = 0; b < n / nvfp4::kElems; ++b, out += nvfp4::kElems) {
        const uint8_t *blk = row + size_t(b) * nvfp4::kBytes;
        for (int i = 0; i < nvfp4::kElems; ++i)
            out[i] = float(nvfp4::value(blk, i)) * nvfp4::scale(blk, i / 16);
    }
}

}  // namespace memra::blocks
