// Weight and activation formats as the tools and tests see them: decoding through the scalar
// backend (the readable reference implementation), the canonical activation quantizers, and the
// rounding geometry of each activation format that the accuracy model of reference.h needs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memra/backend.h"
#include "memra/qtypes.h"

namespace memra::expertkit {

// The qtypes of the format list (memra/qtypes.h), in its order (ggml id order).
std::vector<int32_t> all_qtypes();

// ggml's spelling ("q4_K"), or "qtype<N>" for an id outside the table.
std::string qtype_name(int32_t qtype);

// The table row; throws std::invalid_argument for an id outside the list.
const memra_qtype_info &qtype_info(int32_t qtype);

// Bytes of one row of in_features values.
size_t row_bytes(int32_t qtype, int32_t in_features);

// The scalar backend's kernel for qtype; throws when it has none.
const memra_kernel_v2 &scalar_kernel(int32_t qtype);

// rows x n values, row-major, decoded exactly as ggml's dequantizer does.
std::vector<float> dequantize(int32_t qtype, const uint8_t *w, int32_t rows, int32_t n);

// x[0..n) in activation format act, the bytes every kernel consumes (canonical quantizer).
std::vector<uint8_t> quantize_activation(int32_t act, const float *x, int32_t n);

// The values those bytes stand for.
std::vector<float> dequantize_activation(int32_t act, const uint8_t *q, int32_t n);

// quantize_activation followed by dequantize_activation.
std::vector<float> roundtrip_activation(int32_t act, const float *x, int32_t n);

// Rounding geometry of quantizing x into act, per element: step[i] is the spacing of the
// representable values around x[i] (Q8_0/Q8_K: |d| = amax/127 of its block; BF16: the bf16 ulp
// of x[i]; F32: 0, nothing is rounded), and pos[i] = x[i] / step[i] (0 where step is 0), whose
// fractional part says how close x[i] lies to a rounding boundary (a half-integer).
struct RoundingGrid {
    std::vector<double> step;
    std::vector<double> pos;
};
RoundingGrid rounding_grid(int32_t act, const double *x, int32_t n);

}  // namespace memra::expertkit
