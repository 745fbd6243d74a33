// Q8_0, Q4_0, NVFP4 (Q8_0 activations) for this ISA build.
#include "simd/formats_q8_0_act.h"
#include "simd/kernels.h"

namespace memra::simd::MEMRA_SIMD_NS {
MEMRA_SIMD_DEFINE(q8_0, Q8_0)
MEMRA_SIMD_DEFINE(q4_0, Q4_0)
MEMRA_SIMD_DEFINE(nvfp4, NVFP4)
}  // namespace memra::simd::MEMRA_SIMD_NS
