// The canonical activation quantizers, one per memra_act_format. Every plugin's kernels consume
// these exact bytes and every plugin's own quantizer must reproduce them bit for bit, so these
// functions are the definition (memra_backend_v2::quantize signature: x[0..n) -> out).
#pragma once

#include <cstdint>

namespace memra {

// MEMRA_ACT_F32: a plain copy.
void quantize_row_f32(const float *x, int32_t n, void *out);

// MEMRA_ACT_BF16: f32 -> bf16 per element, RNE, NaN forced quiet (spec §2.3).
void quantize_row_bf16(const float *x, int32_t n, void *out);

// MEMRA_ACT_Q8_0: ggml's x86 AVX/AVX2 from_float, variant (A) of spec §3.1. n % 32 == 0.
void quantize_row_q8_0(const float *x, int32_t n, void *out);

// MEMRA_ACT_Q8_K: ggml's reference algorithm of spec §3.2 (bsums = 0 for an all-zero block).
// n % 256 == 0.
void quantize_row_q8_K(const float *x, int32_t n, void *out);

}  // namespace memra
