// The AVX-512 builds' token paths in a second form chosen per vendor (common.h TokenTunedForm),
// the same bits as the form every other tuning runs:
//  - Q2_K on Intel: the scale inside the weight bytes, one vpshufb + one vpdpbusd per chunk, on
//    ymm (simd/wide512_q2k_scaled_bytes.h). On Sapphire Rapids any 512-bit uop in flight shuts
//    port 1's vector units, and the chunk pairs' vpsrlvq, vpmaddubsw and vpdpwssd all issue on
//    port 0 alone: 12 port-0 uops per block, the loop bound there (token call 0.88 of v1 at 1
//    thread, v1's 256-bit chunks spreading over ports 0, 1 and 5). Here about 38 vector uops per
//    block over ports 0, 1, 5 (v1 about 43), none 512-bit. On the Zen 5 the pairs are 1.03x v1
//    and keep their form.
//  - IQ3_S on Intel: its token path's own form with the sign bits as a mask and the grid
//    index's 9th bit by one shift (simd/wide512_iq3s_mask_signs.h): 0.93 of v1 there, compute-
//    bound. (AMD takes the 16-row panels: simd/wide512_token_by_panels.h.)
//  Q2_K's other candidates for the Intel host, one line apart (its type below): A (commit
//  731de62) v1's 256-bit chunks under v2's block-pair tree; B Q2_KScaled<512>, the same
//  scaled-byte form two chunks a step on zmm (5 port-0 uops per block).
// Included by simd/wide512_q8_K_act.h.
#pragma once

#include "simd/tuning.h"
#include "simd/wide512_iq3s_mask_signs.h"
#include "simd/wide512_q2k_scaled_bytes.h"
#include "simd/wide512_q8_K_act.h"

namespace memra::simd::MEMRA_SIMD_NS {

template <>
struct TokenTunedForm<Q2_K> {
    static constexpr bool kEnabled = true;
    using type = Q2_KScaled<256>;
    static bool chosen() { return tuned_for(MEMRA_TUNING_INTEL); }
};
template <>
struct TokenTunedForm<IQ3_S> {
    static constexpr bool kEnabled = true;
    using type = IQ3_SMasked;
    static bool chosen() { return tuned_for(MEMRA_TUNING_INTEL); }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
