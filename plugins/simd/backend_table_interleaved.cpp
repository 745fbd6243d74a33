// Tests only: the memra_backend_v2 table of plugins/rows_interleaved, every format on both paths
// in the layout of simd/interleaved_rows.h (rows interleaved in groups of kGroup), each kernel the
// SIMD family's own behind the template that undoes the layout. dequantize_row is NULL, as the
// interface allows for a layout of a plugin's own. kGroup does not divide the test matrices' row
// counts, so the last group of a matrix is partial.
#include "memra/backend.h"
#include "memra/qtypes.h"
#include "simd/backend_table.h"
#include "simd/interleaved_rows.h"
#include "simd/kernels.h"

namespace memra::simd::MEMRA_SIMD_NS {
namespace {

constexpr int32_t kGroup = 4;
using Layout = InterleavedRows<kGroup>;

// One row per MEMRA_FORMAT_LIST row, in its order.
#define MEMRA_INTERLEAVED_KERNEL(name, NAME, id, elems, bytes, act)                                       \
    memra_kernel_v2{id,      act,     Layout::kLayout, kGroup, Layout::gemv<gemv_##name>, Layout::gemm<gemm_##name>, \
                    nullptr, Layout::repack},
constexpr memra_kernel_v2 kKernels[] = {MEMRA_FORMAT_LIST(MEMRA_INTERLEAVED_KERNEL)};
#undef MEMRA_INTERLEAVED_KERNEL

constexpr memra_backend_v2 kBackend = backend_table(kKernels);

}  // namespace
}  // namespace memra::simd::MEMRA_SIMD_NS

extern "C" const memra_backend_v2 *MEMRA_SIMD_TABLE_FN(void) { return &memra::simd::MEMRA_SIMD_NS::kBackend; }
