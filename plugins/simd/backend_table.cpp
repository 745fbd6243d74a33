// The memra_backend_v2 table of one ISA build: constant-initialised POD (constexpr), so loading
// the plugin runs no code of ours. Activation quantizers: the canonical ones of plugins/common
// (F32) or their vector form, byte for byte the same (simd/quantize_acts.h); dequantize_row is the shared decoder of common/decode.h (bit-identical to ggml).
// A format missing here is served by the next lower plugin (down to scalar).
#include "common/decode.h"
#include "common/quantize.h"
#include "memra/backend.h"
#include "memra/qtypes.h"
#include "simd/kernels.h"
#include "simd/quantize_acts.h"

namespace memra::simd::MEMRA_SIMD_NS {
namespace {

// One row per MEMRA_FORMAT_LIST row, in its order.
#define MEMRA_SIMD_KERNEL(name, NAME, id, elems, bytes, act) \
    memra_kernel_v2{id, act, MEMRA_LAYOUT_GGML, 1, gemv_##name, gemm_##name, blocks::dequantize_row_##name, nullptr},
constexpr memra_kernel_v2 kKernels[] = {MEMRA_FORMAT_LIST(MEMRA_SIMD_KERNEL)};

#undef MEMRA_SIMD_KERNEL

constexpr memra_backend_v2 kBackend = {
    MEMRA_BACKEND_INTERFACE_VERSION,
    sizeof(memra_backend_v2),
    MEMRA_SIMD_NAME,
    MEMRA_SIMD_DESCRIPTION,
    MEMRA_SIMD_FEATURES,
    {quantize_row_f32, quantize_row_bf16_simd, quantize_row_q8_0_simd, quantize_row_q8_K_simd},
    int32_t(sizeof(kKernels) / sizeof(kKernels[0])),
    kKernels,
};
static_assert(MEMRA_ACT_F32 == 0 && MEMRA_ACT_BF16 == 1 && MEMRA_ACT_Q8_0 == 2 && MEMRA_ACT_Q8_K == 3,
              "quantize[] above is listed in memra_act_format order");

}  // namespace
}  // namespace memra::simd::MEMRA_SIMD_NS

extern "C" const memra_backend_v2 *MEMRA_SIMD_TABLE_FN(void) { return &memra::simd::MEMRA_SIMD_NS::kBackend; }
