// The memra_backend_v2 table of a tile build (plugins/amx, plugins/amx_emulated): the rows path
// (gemm) of MEMRA_TILE_FORMAT_LIST's formats and nothing else. gemv is NULL everywhere: at one
// row a tile instruction has one activation row to work on, so the token path stays with the
// plugins below (avx512 and up), per format and per path (core/dispatch/backend_registry.cpp).
#include "common/decode.h"
#include "memra/backend.h"
#include "memra/qtypes.h"
#include "simd/backend_table.h"
#include "simd/tile_formats.h"

namespace memra::simd::MEMRA_SIMD_NS {
namespace {

#define MEMRA_TILE_KERNEL_(name, Form, least_m)                                                              \
    memra_kernel_v2{memra::formats::name.id, memra::formats::name.act_format, MEMRA_LAYOUT_GGML, 1, nullptr, \
                    gemm_tiles_##name, blocks::dequantize_row_##name, nullptr},
constexpr memra_kernel_v2 kKernels[] = {MEMRA_TILE_FORMAT_LIST(MEMRA_TILE_KERNEL_)};
#undef MEMRA_TILE_KERNEL_

constexpr memra_backend_v2 kBackend = backend_table(kKernels);

}  // namespace
}  // namespace memra::simd::MEMRA_SIMD_NS

extern "C" const memra_backend_v2 *MEMRA_SIMD_TABLE_FN(void) { return &memra::simd::MEMRA_SIMD_NS::kBackend; }
