// The AVX-512 builds' token paths in a second form chosen per vendor (common.h TokenTunedForm),
// the same bits as the form every other tuning runs:
//  - Q2_K on Intel: v1's 256-bit chunks (vpsrlw by an immediate + vpand, vpshufb of the scales,
//    vpmaddubsw + vpdpwssd on ymm) under v2's block-pair tree. On Sapphire Rapids any 512-bit
//    uop in flight shuts port 1's vector units, and the chunk pairs' vpsrlvq, vpmaddubsw and
//    vpdpwssd all issue on port 0 alone: 12 port-0 uops per block, the loop bound there (token
//    call 0.88 of v1 at 1 thread, where v1's ymm chunks spread over ports 0, 1 and 5). On the
//    Zen 5 the pairs are 1.03x v1 and keep their form.
// Included by simd/wide512_q8_K_act.h.
#pragma once

#include "simd/tuning.h"
#include "simd/wide512_q8_K_act.h"

namespace memra::simd::MEMRA_SIMD_NS {

// Q2_K's fields under another name, so that no TokenLanes specialization applies: its token path
// decodes and dots chunk by chunk on 256 bits (SuperBlock::dot_chunks).
struct Q2_KFields256 : Q2_KFields {};
using Q2_K256 = SuperBlock<Q2_KFields256>;

template <>
struct TokenTunedForm<Q2_K> {
    static constexpr bool kEnabled = true;
    using type = Q2_K256;
    static bool chosen() { return tuned_for(MEMRA_TUNING_INTEL); }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
