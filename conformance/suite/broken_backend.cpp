// A deliberately wrong backend, to show that the conformance checks can fail: the scalar
// kernels, except that Q8_0's gemv (the token path; gemm, the rows path, stays right) returns
// its last row one ulp off. Its manifest names it "avx2", so that a directory holding it,
// searched first (MEMRA_CPU_EXPERT_PLUGIN_DIR), shadows the real avx2 plugin. Test build only.
#include <cmath>
#include <vector>

#include "memra/backend.h"
#include "memra/qtypes.h"
#include "scalar/scalar_backend.h"

namespace {

const memra_kernel_v2 &scalar_q8_0() {
    const memra_backend_v2 *s = memra_scalar_backend();
    for (int32_t i = 0; i < s->kernel_count; ++i)
        if (s->kernels[i].qtype == 8) return s->kernels[i];
    return s->kernels[0];  // unreachable: the scalar backend serves every format
}

void gemv_last_row_off(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, float *y) {
    scalar_q8_0().gemv(w, row_bytes, rows, n, xq, y);
    y[rows - 1] = std::nextafter(y[rows - 1], INFINITY);
}

memra_backend_v2 make_table() {
    static std::vector<memra_kernel_v2> kernels;
    memra_backend_v2 t = *memra_scalar_backend();
    kernels.assign(t.kernels, t.kernels + t.kernel_count);
    for (memra_kernel_v2 &k : kernels)
        if (k.qtype == 8) k.gemv = gemv_last_row_off;
    t.name = "avx2";
    t.description = "tests only: the scalar kernels with Q8_0 gemv one ulp off";
    t.kernels = kernels.data();
    return t;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const memra_backend_v2 *memra_backend_entry_v2(void) {
    static const memra_backend_v2 table = make_table();
    return &table;
}
