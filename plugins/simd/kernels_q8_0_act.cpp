// The formats paired with Q8_0 activations (Q4_0, Q8_0, MXFP4, NVFP4) for this ISA build.
#include "simd/formats_q8_0_act.h"
#include "simd/kernels.h"

namespace memra::simd::MEMRA_SIMD_NS {
// Every format of MEMRA_FORMAT_LIST paired with Q8_0 activations.
#define MEMRA_SIMD_ON_MEMRA_ACT_F32(name, NAME)
#define MEMRA_SIMD_ON_MEMRA_ACT_BF16(name, NAME)
#define MEMRA_SIMD_ON_MEMRA_ACT_Q8_0(name, NAME) MEMRA_SIMD_DEFINE(name, NAME)
#define MEMRA_SIMD_ON_MEMRA_ACT_Q8_K(name, NAME)
MEMRA_FORMAT_LIST(MEMRA_SIMD_DEFINE_ROW_)
}  // namespace memra::simd::MEMRA_SIMD_NS
