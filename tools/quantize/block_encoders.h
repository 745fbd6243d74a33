// One encoder per format: x[0..block_elems) -> one block of block_bytes at out. Internal to
// memra_quantize (quantize.cpp dispatches on the qtype).
#pragma once

#include <cstdint>

namespace memra::quantize {

// encode_plain.cpp
void encode_q4_0(const float *x, uint8_t *out);
void encode_q8_0(const float *x, uint8_t *out);
void encode_nvfp4(const float *x, uint8_t *out);
// encode_kquants.cpp
void encode_q2_K(const float *x, uint8_t *out);
void encode_q3_K(const float *x, uint8_t *out);
void encode_q4_K(const float *x, uint8_t *out);
void encode_q5_K(const float *x, uint8_t *out);
void encode_q6_K(const float *x, uint8_t *out);
// encode_iquants.cpp
void encode_iq4_xs(const float *x, uint8_t *out);
void encode_iq3_s(const float *x, uint8_t *out);

}  // namespace memra::quantize
