// The AVX-512 builds' token paths in a second form chosen per vendor (common.h TokenTunedForm),
// the same bits as the form every other tuning runs:
//  - Q2_K on Intel: the scale inside the weight bytes, one vpshufb + one vpdpbusd per chunk pair
//    (simd/wide512_q2k_scaled_bytes.h). On Sapphire Rapids any 512-bit uop in flight shuts port
//    1's vector units, and the chunk pairs' vpsrlvq, vpmaddubsw and vpdpwssd all issue on port 0
//    alone: 12 port-0 uops per block, the loop bound there (token call 0.88 of v1 at 1 thread);
//    this form has 5. On the Zen 5 the pairs are 1.03x v1 and keep their form.
//    (Candidate A, commit 731de62: v1's 256-bit chunks under v2's block-pair tree, Q2_K256.)
// Included by simd/wide512_q8_K_act.h.
#pragma once

#include "simd/tuning.h"
#include "simd/wide512_q2k_scaled_bytes.h"
#include "simd/wide512_q8_K_act.h"

namespace memra::simd::MEMRA_SIMD_NS {

template <>
struct TokenTunedForm<Q2_K> {
    static constexpr bool kEnabled = true;
    using type = Q2_KScaled;
    static bool chosen() { return tuned_for(MEMRA_TUNING_INTEL); }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
