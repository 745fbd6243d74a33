// The activation quantizers of one ISA build: the canonical quantizers of plugins/common
// (quantize.h) with the same operations per element in 256-bit vectors, so the bytes are
// identical (plugins/tests/test_quantizers.cpp compares every plugin's with them, and the ggml
// truth tests with ggml's). The scalar loops took ~8 ns per value: 1 ms for the 32 input rows of
// a rows call, quantized before its parallel part, and again for its h.
#pragma once

#include <cstdint>

#include "isa_select.h"

namespace memra::simd::MEMRA_SIMD_NS {

void quantize_row_bf16_simd(const float *x, int32_t n, void *out);
void quantize_row_q8_0_simd(const float *x, int32_t n, void *out);
void quantize_row_q8_K_simd(const float *x, int32_t n, void *out);

}  // namespace memra::simd::MEMRA_SIMD_NS
