// The memra_backend_v2 table of one ISA build (simd/backend_table.h): every format on both paths;
// dequantize_row is the shared decoder of common/decode.h (bit-identical to ggml).
// A format missing here is served by the next lower plugin (down to scalar).
#include "common/decode.h"
#include "memra/backend.h"
#include "memra/qtypes.h"
#include "simd/backend_table.h"
#include "simd/kernels.h"

namespace memra::simd::MEMRA_SIMD_NS {
namespace {

// One row per MEMRA_FORMAT_LIST row, in its order.
#define MEMRA_SIMD_KERNEL(name, NAME, id, elems, bytes, act) \
    memra_kernel_v2{id, act, MEMRA_LAYOUT_GGML, 1, gemv_##name, gemm_##name, blocks::dequantize_row_##name, nullptr},
constexpr memra_kernel_v2 kKernels[] = {MEMRA_FORMAT_LIST(MEMRA_SIMD_KERNEL)};

#undef MEMRA_SIMD_KERNEL

constexpr memra_backend_v2 kBackend = backend_table(kKernels);

}  // namespace
}  // namespace memra::simd::MEMRA_SIMD_NS

extern "C" const memra_backend_v2 *MEMRA_SIMD_TABLE_FN(void) { return &memra::simd::MEMRA_SIMD_NS::kBackend; }
