// The K-quants, IQ4_XS and IQ3_S (Q8_K activations) for this ISA build.
#include "simd/formats_q8_K_act.h"
#include "simd/kernels.h"

namespace memra::simd::MEMRA_SIMD_NS {
MEMRA_SIMD_DEFINE(q2_K, Q2_K)
MEMRA_SIMD_DEFINE(q3_K, Q3_K)
MEMRA_SIMD_DEFINE(q4_K, Q4_K)
MEMRA_SIMD_DEFINE(q5_K, Q5_K)
MEMRA_SIMD_DEFINE(q6_K, Q6_K)
MEMRA_SIMD_DEFINE(iq3_s, IQ3_S)
MEMRA_SIMD_DEFINE(iq4_xs, IQ4_XS)
}  // namespace memra::simd::MEMRA_SIMD_NS
