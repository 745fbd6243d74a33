// Differential fuzzer of the backend kernels: arbitrary block bytes (any scale bits, any quant
// bits) and arbitrary activations (NaN, inf, huge, subnormal) through every kernel of the scalar
// reference and of each SIMD plugin this CPU runs. Properties:
//  - no kernel reads outside the rows and activations it is given: every buffer is allocated to
//    its exact size, so AddressSanitizer reports the first byte past it;
//  - no undefined behaviour (UBSan, float-cast-overflow included: the quantizers turn NaN, inf and
//    1e38 into integers);
//  - scalar gemm equals scalar gemv, each plugin's gemv, gemm and dequantize_row equal scalar's,
//    each plugin's quantizer equals the canonical one: bit for bit (NaN == NaN, fuzz_util.h).
//
// Input: qtype, rows, row length, gemm width m, strides and the float mode from the first bytes;
// then the weight bytes and the activations from the rest, repeated as needed.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/quantize.h"
#include "dispatch/cpu_features.h"
#include "fuzz_util.h"
#include "memra/backend.h"
#include "memra/qtypes.h"
#include "dispatch/plugin_loader.h"
#include "scalar/scalar_backend.h"

namespace memra::fuzz {
namespace {

using QuantizeFn = void (*)(const float *, int32_t, void *);

const memra_kernel_v2 *find_kernel(const memra_backend_v2 *b, int32_t qtype) {
    for (int32_t i = 0; i < b->kernel_count; ++i)
        if (b->kernels[i].qtype == qtype) return &b->kernels[i];
    return nullptr;
}

// The SIMD plugin tables this CPU runs, loaded the way the core loads them (manifest first).
const std::vector<const memra_backend_v2 *> &plugin_tables() {
    static const std::vector<const memra_backend_v2 *> tables = [] {
        static const std::vector<PluginRecord> records =
            load_plugins({MEMRA_FUZZ_BACKEND_DIR}, detect_cpu_features().usable);
        std::vector<const memra_backend_v2 *> t;
        for (const PluginRecord &r : records)
            if (r.loaded && std::string(r.table->name) != "scalar") t.push_back(r.table);
        std::fprintf(stderr, "memra-fuzz-kernels: scalar vs %zu plugin table(s):", t.size());
        for (const memra_backend_v2 *b : t) std::fprintf(stderr, " %s", b->name);
        std::fprintf(stderr, "\n");
        return t;
    }();
    return tables;
}

struct Problem {
    const memra_qtype_info *q;
    int32_t rows, n, m;
    size_t row_bytes, xq_row_bytes, xq_stride, ldy;
    std::vector<uint8_t> w;   // rows * row_bytes, exact
    std::vector<float> x;     // m * n activations
    std::vector<uint8_t> xq;  // (m - 1) * xq_stride + xq_row_bytes, exact
};

Problem make_problem(FuzzedDataProvider &fdp) {
    Problem p;
    p.q = &memra_qtype_table[fdp.ConsumeIntegralInRange<int>(0, MEMRA_QTYPE_COUNT - 1)];
    p.rows = fdp.ConsumeIntegralInRange<int32_t>(1, 9);
    // Plain formats (block of 1) get any length, so SIMD tails of every size are reached.
    const int32_t blocks = p.q->block_elems == 1 ? fdp.ConsumeIntegralInRange<int32_t>(1, 80)
                                                 : fdp.ConsumeIntegralInRange<int32_t>(1, 3);
    p.n = blocks * p.q->block_elems;
    p.m = fdp.ConsumeIntegralInRange(0, 7) == 0 ? 64 : fdp.ConsumeIntegralInRange<int32_t>(1, 6);
    const int32_t act = p.q->act_format;
    p.xq_row_bytes = memra_act_row_bytes(act, p.n);
    p.xq_stride = p.xq_row_bytes + 4 * fdp.ConsumeIntegralInRange<size_t>(0, 3);
    p.ldy = size_t(p.rows) + fdp.ConsumeIntegralInRange<size_t>(0, 3);
    const FloatMode mode = FloatMode(fdp.ConsumeIntegralInRange<uint8_t>(0, 2));
    const int exponent = fdp.ConsumeIntegralInRange<int>(-20, 20);

    ByteCycle bytes(fdp.ConsumeRemainingBytes<uint8_t>());
    p.row_bytes = size_t(blocks) * size_t(p.q->block_bytes);
    p.w.resize(size_t(p.rows) * p.row_bytes);
    bytes.fill(p.w.data(), p.w.size());
    p.x.resize(size_t(p.m) * size_t(p.n));
    for (float &v : p.x) v = next_float(bytes, mode, exponent);
    p.xq.resize(size_t(p.m - 1) * p.xq_stride + p.xq_row_bytes);
    const QuantizeFn quantize = memra_scalar_backend()->quantize[act];
    for (int32_t j = 0; j < p.m; ++j)
        quantize(p.x.data() + size_t(j) * size_t(p.n), p.n, p.xq.data() + size_t(j) * p.xq_stride);
    return p;
}

// Every activation format's quantizer of `b` on the activations (as far as whole blocks reach),
// compared with the canonical scalar one.
void check_quantizers(const memra_backend_v2 *b, const std::vector<float> &x) {
    for (int32_t f = 0; f < MEMRA_ACT_FORMAT_COUNT; ++f) {
        const int32_t block = memra_act_block_elems(f);
        const int32_t n = int32_t(x.size()) / block * block;
        if (n == 0 || !b->quantize[f]) continue;
        std::vector<uint8_t> want(memra_act_row_bytes(f, n)), got(want.size());
        memra_scalar_backend()->quantize[f](x.data(), n, want.data());
        b->quantize[f](x.data(), n, got.data());
        check(want == got, "a plugin quantizer differs from the canonical one");
    }
}

struct Results {
    std::vector<float> gemv, gemm, rows;  // gemv: m * rows (one gemv per activation)
};

Results run(const memra_kernel_v2 &k, const Problem &p) {
    Results r;
    r.gemv.resize(size_t(p.m) * size_t(p.rows));
    for (int32_t j = 0; j < p.m; ++j) {
        std::vector<float> y(size_t(p.rows));  // exact: a write past rows is caught
        k.gemv(p.w.data(), p.row_bytes, p.rows, p.n, p.xq.data() + size_t(j) * p.xq_stride, y.data());
        std::copy(y.begin(), y.end(), r.gemv.begin() + size_t(j) * size_t(p.rows));
    }
    std::vector<float> y(size_t(p.m - 1) * p.ldy + size_t(p.rows), -7.0f);
    k.gemm(p.w.data(), p.row_bytes, p.rows, p.n, p.xq.data(), p.xq_stride, p.m, y.data(), p.ldy);
    for (int32_t j = 0; j < p.m; ++j)
        for (int32_t i = 0; i < p.rows; ++i) r.gemm.push_back(y[size_t(j) * p.ldy + size_t(i)]);
    for (size_t gap = 0; gap + 1 < size_t(p.m); ++gap)  // ldy padding is not the kernel's to write
        for (size_t i = size_t(p.rows); i < p.ldy; ++i)
            check(y[gap * p.ldy + i] == -7.0f, "gemm wrote between the rows of y (ldy padding)");
    for (int32_t i = 0; i < p.rows; ++i) {
        std::vector<float> out(size_t(p.n));
        k.dequantize_row(p.w.data() + size_t(i) * p.row_bytes, p.n, out.data());
        r.rows.insert(r.rows.end(), out.begin(), out.end());
    }
    return r;
}

// Aborts with the first differing value, so that a crash report says what differs where.
void check_same(const std::vector<float> &got, const std::vector<float> &want, const Problem &p,
                const char *backend, const char *what) {
    for (size_t i = 0; i < want.size(); ++i) {
        if (same_result(got[i], want[i])) continue;
        uint32_t g, w;
        std::memcpy(&g, &got[i], 4);
        std::memcpy(&w, &want[i], 4);
        std::fprintf(stderr, "%s %s, %s rows %d n %d m %d: value %zu is %a (0x%08x), scalar %a (0x%08x)\n",
                     backend, what, p.q->name, p.rows, p.n, p.m, i, double(got[i]), g, double(want[i]), w);
        violated("a kernel differs from the scalar reference");
    }
}

}  // namespace
}  // namespace memra::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using namespace memra::fuzz;
    FuzzedDataProvider fdp(data, size);
    const Problem p = make_problem(fdp);
    const memra_kernel_v2 *scalar = find_kernel(memra_scalar_backend(), p.q->id);
    check(scalar != nullptr, "the scalar backend serves every qtype");
    const Results want = run(*scalar, p);
    check_same(want.gemm, want.gemv, p, "scalar", "gemm (against scalar gemv)");
    check_quantizers(memra_scalar_backend(), p.x);  // every canonical quantizer, for UB alone
    for (const memra_backend_v2 *b : plugin_tables()) {
        check_quantizers(b, p.x);
        const memra_kernel_v2 *k = find_kernel(b, p.q->id);
        if (!k) continue;  // served by a lower plugin
        const Results got = run(*k, p);
        check_same(got.gemv, want.gemv, p, b->name, "gemv");
        check_same(got.gemm, want.gemm, p, b->name, "gemm");
        check_same(got.rows, want.rows, p, b->name, "dequantize_row");
    }
    return 0;
}
