// One encoder per format: x[0..block_elems) -> one block of block_bytes at out (F32 and BF16:
// blocks of one value). Internal to
// memra_quantize (quantize.cpp dispatches on the qtype).
#pragma once

#include <cstdint>

#include "memra/qtypes.h"

namespace memra::quantize {

// encode_<name> for every format of MEMRA_FORMAT_LIST: encode_plain.cpp (F32, BF16, Q4_0, Q8_0,
// NVFP4), encode_kquants.cpp, encode_iquants.cpp.
#define MEMRA_ENCODER_DECLARE_(name, NAME, id, elems, bytes, act) void encode_##name(const float *x, uint8_t *out);
MEMRA_FORMAT_LIST(MEMRA_ENCODER_DECLARE_)
#undef MEMRA_ENCODER_DECLARE_

}  // namespace memra::quantize
