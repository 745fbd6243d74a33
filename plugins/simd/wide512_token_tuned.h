// The AVX-512 builds' token paths in a second form chosen per vendor (common.h TokenTunedForm),
// the same bits as the form every other tuning runs:
//  - Q2_K on Intel: the scale inside the weight bytes, one vpshufb + one vpdpbusd per chunk pair
//    (simd/wide512_q2k_scaled_bytes.h). On Sapphire Rapids any 512-bit uop in flight shuts
//    port 1's vector units, and the chunk pairs' vpsrlvq, vpmaddubsw and vpdpwssd all issue on
//    port 0 alone: with the head about 15 of 35 vector uops per block on port 0, the loop bound
//    there (token call 0.88 of v1 at 1 thread, v1's 256-bit chunks spreading over ports 0, 1
//    and 5); this form has about 8 of 30. On the Zen 5 VM it read 1.05x the pairs from DRAM
//    (1 thread, 3 alternating rounds, 2026-12-06: 17.1 / 17.1 / 16.6 vs 16.3 / 15.8 / 15.7
//    GB/s), but AMD keeps the measured pairs until the Intel host has ruled.
//  - IQ3_S on Intel: its token path's own form with the sign bits as a mask and the grid
//    index's 9th bit by one shift (simd/wide512_iq3s_mask_signs.h): 0.93 of v1 there, compute-
//    bound. Intel only: on the Zen 5 VM the masked vpsubb form read at most 3.1 GB/s in cache
//    where the own form reached 3.8 and the index change alone 4.0 (memra-bench-micro gemv, 5
//    alternating rounds, 2026-12-06); AMD takes the 16-row panels (wide512_token_by_panels.h).
//  Q2_K's other candidates for the Intel host, one line apart (its type below): C
//  Q2_KScaled<256>, the same form one chunk a step on ymm (nothing 512-bit; on the Zen 5 VM
//  0.85x the pairs); A (commit 731de62) v1's 256-bit chunks under v2's block-pair tree (0.91x).
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
    using type = Q2_KScaled<512>;
    static bool chosen() { return tuned_for(MEMRA_TUNING_INTEL); }
};
template <>
struct TokenTunedForm<IQ3_S> {
    static constexpr bool kEnabled = true;
    using type = IQ3_SMasked;
    static bool chosen() { return tuned_for(MEMRA_TUNING_INTEL); }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
