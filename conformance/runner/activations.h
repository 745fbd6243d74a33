// The activation rows every conformance check feeds the kernels and the core: mostly what a
// normalised residual stream looks like (N(0, 1)), with the rows that stress quantization
// mixed in, since the quantizer's edge cases are where two implementations part ways first.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace memra::conformance {

// rows x n values, row-major. Of every eight rows, row 1 is all zeros (a zero block scale, zero
// bsums), row 3 has rare huge outliers (the other quants of their blocks round to 0 or +-1),
// row 4 holds one NaN and one +-inf (a quantized block holding one gets a NaN scale, so the
// result must be NaN in every plugin), row 5 is +-4 everywhere (every quant at +-127) and row 7 is scaled into the f32 / bf16
// subnormal range (~1e-38); the rest are N(0, 1).
std::vector<float> activation_rows(int32_t rows, int32_t n, std::mt19937_64 &rng);

}  // namespace memra::conformance
