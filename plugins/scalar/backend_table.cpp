// The scalar backend's memra_backend_v2 table: constant-initialised POD (constexpr), so loading
// the plugin runs no code of ours.
#include "common/quantize.h"
#include "memra/backend.h"
#include "memra/qtypes.h"
#include "scalar/gemv.h"
#include "scalar/kernels.h"
#include "scalar/scalar_backend.h"

namespace memra::scalar {
namespace {

template <DotFn Dot>
constexpr memra_kernel_v2 kernel(int32_t qtype, int32_t act_format, DequantizeFn dequantize) {
    return memra_kernel_v2{qtype, act_format, MEMRA_LAYOUT_GGML, 1, gemv<Dot>, gemm<Dot>, dequantize, nullptr};
}

// One row per MEMRA_FORMAT_LIST row, in its order.
#define MEMRA_SCALAR_KERNEL_(name, NAME, id, elems, bytes, act) kernel<dot_##name>(id, act, blocks::dequantize_row_##name),
constexpr memra_kernel_v2 kKernels[] = {MEMRA_FORMAT_LIST(MEMRA_SCALAR_KERNEL_)};
#undef MEMRA_SCALAR_KERNEL_
static_assert(sizeof(kKernels) / sizeof(kKernels[0]) == MEMRA_QTYPE_COUNT,
              "the scalar backend serves every weight format");

constexpr memra_backend_v2 kBackend = {
    MEMRA_BACKEND_INTERFACE_VERSION,
    sizeof(memra_backend_v2),
    "scalar",
    "portable reference kernels (baseline x86-64, no SIMD extensions), every weight format",
    MEMRA_BACKEND_REQUIRED_FEATURES,  // its row of plugins/backends.table, via CMake
    {quantize_row_f32, quantize_row_bf16, quantize_row_q8_0, quantize_row_q8_K},
    MEMRA_QTYPE_COUNT,
    kKernels,
    nullptr,  // tune: the reference has one form of each format
};
static_assert(MEMRA_ACT_F32 == 0 && MEMRA_ACT_BF16 == 1 && MEMRA_ACT_Q8_0 == 2 && MEMRA_ACT_Q8_K == 3,
              "quantize[] above is listed in memra_act_format order");

}  // namespace
}  // namespace memra::scalar

extern "C" const memra_backend_v2 *memra_scalar_backend(void) { return &memra::scalar::kBackend; }
