// The memra_backend_v2 of one build around its kernel list (backend_table.cpp: every format,
// both paths; backend_table_tiles.cpp: the tile builds' rows path): names and required features
// from the ISA folder's isa_select.h, quantize[] = the canonical quantizers of plugins/common (F32)
// or their vector form, byte for byte the same (simd/quantize_acts.h), tune = simd/tuning.h's.
// constexpr, so the table is constant-initialised and loading the plugin runs no code of ours.
#pragma once

#include <cstddef>

#include "common/quantize.h"
#include "isa_select.h"
#include "memra/backend.h"
#include "simd/quantize_acts.h"
#include "simd/tuning.h"

namespace memra::simd::MEMRA_SIMD_NS {

static_assert(MEMRA_ACT_F32 == 0 && MEMRA_ACT_BF16 == 1 && MEMRA_ACT_Q8_0 == 2 && MEMRA_ACT_Q8_K == 3,
              "quantize[] below is listed in memra_act_format order");

template <size_t N>
constexpr memra_backend_v2 backend_table(const memra_kernel_v2 (&kernels)[N]) {
    return {MEMRA_BACKEND_INTERFACE_VERSION,
            sizeof(memra_backend_v2),
            MEMRA_SIMD_NAME,
            MEMRA_SIMD_DESCRIPTION,
            MEMRA_SIMD_FEATURES,
            {quantize_row_f32, quantize_row_bf16_simd, quantize_row_q8_0_simd, quantize_row_q8_K_simd},
            int32_t(N),
            kernels,
            tune_kernels};
}

}  // namespace memra::simd::MEMRA_SIMD_NS
