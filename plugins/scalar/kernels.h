// The scalar reference kernels, one decoder and one dot product per weight format. These are
// the definition the SIMD plugins are tested against: decoders bit-identical to ggml's
// dequantizers, dots in the canonical accumulation order of lanes.h (ggml's AVX2 order).
#pragma once

#include <cstdint>

namespace memra::scalar {

// out[0..n) = the n values of one row (n a multiple of the format's block size).
using DequantizeFn = void (*)(const uint8_t *row, int32_t n, float *out);

// dot(row w, activation xq) over n values; xq is in the format's activation layout.
using DotFn = float (*)(const uint8_t *w, const void *xq, int32_t n);

void dequantize_row_f32(const uint8_t *row, int32_t n, float *out);
void dequantize_row_bf16(const uint8_t *row, int32_t n, float *out);
void dequantize_row_q4_0(const uint8_t *row, int32_t n, float *out);
void dequantize_row_q8_0(const uint8_t *row, int32_t n, float *out);
void dequantize_row_nvfp4(const uint8_t *row, int32_t n, float *out);
void dequantize_row_q2_K(const uint8_t *row, int32_t n, float *out);
void dequantize_row_q3_K(const uint8_t *row, int32_t n, float *out);
void dequantize_row_q4_K(const uint8_t *row, int32_t n, float *out);
void dequantize_row_q5_K(const uint8_t *row, int32_t n, float *out);
void dequantize_row_q6_K(const uint8_t *row, int32_t n, float *out);
void dequantize_row_iq3_s(const uint8_t *row, int32_t n, float *out);
void dequantize_row_iq4_xs(const uint8_t *row, int32_t n, float *out);

float dot_f32(const uint8_t *w, const void *x_f32, int32_t n);
float dot_bf16(const uint8_t *w, const void *x_bf16, int32_t n);
float dot_q4_0(const uint8_t *w, const void *x_q8_0, int32_t n);
float dot_q8_0(const uint8_t *w, const void *x_q8_0, int32_t n);
float dot_nvfp4(const uint8_t *w, const void *x_q8_0, int32_t n);
float dot_q2_K(const uint8_t *w, const void *x_q8_K, int32_t n);
float dot_q3_K(const uint8_t *w, const void *x_q8_K, int32_t n);
float dot_q4_K(const uint8_t *w, const void *x_q8_K, int32_t n);
float dot_q5_K(const uint8_t *w, const void *x_q8_K, int32_t n);
float dot_q6_K(const uint8_t *w, const void *x_q8_K, int32_t n);
float dot_iq3_s(const uint8_t *w, const void *x_q8_K, int32_t n);
float dot_iq4_xs(const uint8_t *w, const void *x_q8_K, int32_t n);

}  // namespace memra::scalar
