// The tile builds (plugins/amx on AMX tiles, plugins/amx_emulated on their AVX-512 emulation)
// against the scalar reference, bit for bit: gemm for EVERY m in 1..64 (and 70 and 130, sliced
// by 64), row counts around the 16-row B tiles (1, 2, 3, 16, 17, 31, 33: a partial last row
// group of every size class, a partial activation tile for every m not a multiple of 16), rows
// of one block and of several, random
// weights and activations with the zero / outlier / extreme ones. And the table's shape: a
// rows-only build, gemv NULL everywhere (the token path falls to the plugins below), the issue's
// formats (Q8_0, Q4_0, Q4_K) among those it serves.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "formats.h"
#include "memra/cpu_experts.h"
#include "simd_builds.h"
#include "synthetic_weights.h"
#include "test_util.h"

namespace memra::plugin_tests {
namespace {

// The rows of plugins/backends.table that are tile builds (plugins/amx*).
std::vector<const char *> tile_builds() {
    std::vector<const char *> names;
    for (const char *name : simd_rows(true))
        if (std::string(name).rfind("amx", 0) == 0) names.push_back(name);
    return names;
}

constexpr int32_t kActs = 130;

// One problem: `out` rows of `in` values, kActs activations with the scalar answers.
struct TileCase {
    int32_t in = 0, out = 0;
    size_t row_bytes = 0, stride = 0;
    std::vector<uint8_t> w, xq;
    std::vector<float> ref;  // ref[j * out + r]
};

const TileCase &tile_case(int32_t qtype, int32_t in, int32_t out) {
    static std::map<std::tuple<int32_t, int32_t, int32_t>, std::unique_ptr<TileCase>> cache;
    std::unique_ptr<TileCase> &slot = cache[{qtype, in, out}];
    if (slot) return *slot;
    slot = std::make_unique<TileCase>();
    TileCase &c = *slot;
    const memra_qtype_info &info = expertkit::qtype_info(qtype);
    std::mt19937_64 rng(uint64_t(qtype) * 7919u + uint64_t(in) * 31u + uint64_t(out));
    c.in = in, c.out = out;
    c.row_bytes = expertkit::row_bytes(qtype, in);
    c.w = expertkit::random_weights(qtype, out, in, rng);
    const size_t act_bytes = memra_act_row_bytes(info.act_format, in);
    c.stride = act_bytes + 24;  // padded, and the padding is not zero
    c.xq.assign(c.stride * kActs, 0xCD);
    c.ref.resize(size_t(out) * kActs);
    const memra_kernel_v2 &sk = scalar_kernel(qtype);
    for (int32_t j = 0; j < kActs; ++j) {
        std::vector<float> x = expertkit::random_input(in, rng);
        if (j % 16 == 1) std::fill(x.begin(), x.end(), 0.0f);
        if (j % 16 == 2)
            for (size_t k = 0; k < x.size(); k += 1 + rng() % 37) x[k] *= 1000.0f;
        if (j % 16 == 3)
            for (size_t k = 0; k < x.size(); ++k) x[k] = (k + rng() % 2) % 2 ? 4.0f : -4.0f;
        const std::vector<uint8_t> q = expertkit::quantize_activation(info.act_format, x.data(), in);
        std::memcpy(&c.xq[size_t(j) * c.stride], q.data(), act_bytes);
        sk.gemv(c.w.data(), c.row_bytes, out, in, &c.xq[size_t(j) * c.stride], &c.ref[size_t(j) * out]);
    }
    return c;
}

// The build's table, or a skip saying why this machine cannot run it (a failure if it is broken).
class TilesVsScalar : public ::testing::TestWithParam<const char *> {
protected:
    void SetUp() override { use_build(GetParam(), table_); }
    const memra_backend_v2 *table_ = nullptr;
};

TEST_P(TilesVsScalar, TableIsRowsOnly) {
    const memra_backend_v2 *t = table_;
    ASSERT_GT(t->kernel_count, 0);
    for (int32_t i = 0; i < t->kernel_count; ++i) {
        const memra_kernel_v2 &k = t->kernels[i];
        SCOPED_TRACE(expertkit::qtype_info(k.qtype).name);
        EXPECT_EQ(k.gemv, nullptr) << "the token path is the plugins' below";
        EXPECT_NE(k.gemm, nullptr);
        EXPECT_NE(k.dequantize_row, nullptr);
        EXPECT_EQ(k.layout, MEMRA_LAYOUT_GGML);
        EXPECT_EQ(k.act_format, expertkit::qtype_info(k.qtype).act_format);
    }
    for (int32_t q : {MEMRA_QTYPE_Q8_0, MEMRA_QTYPE_Q4_0, MEMRA_QTYPE_Q4_K})
        EXPECT_NE(find_kernel(t, q), nullptr) << expertkit::qtype_info(q).name;
    EXPECT_EQ(find_kernel(t, MEMRA_QTYPE_BF16), nullptr) << "tdpbf16ps's order is not the BF16 order";
}

TEST_P(TilesVsScalar, GemmBitExactForEveryM) {
    const memra_backend_v2 *t = table_;
    for (int32_t i = 0; i < t->kernel_count; ++i) {
        const memra_kernel_v2 &k = t->kernels[i];
        const memra_qtype_info &info = expertkit::qtype_info(k.qtype);
        for (int32_t blocks : {1, 5})
            for (int32_t out : {1, 2, 3, 16, 17, 31, 33}) {
                const int32_t in = blocks * info.block_elems;
                const TileCase &c = tile_case(k.qtype, in, out);
                SCOPED_TRACE(std::string(GetParam()) + " " + info.name + " in=" + std::to_string(in) +
                             " out=" + std::to_string(out));
                std::vector<int32_t> ms;
                for (int32_t m = 1; m <= 64; ++m) ms.push_back(m);
                ms.push_back(70);
                ms.push_back(kActs);
                for (int32_t m : ms) {
                    const size_t ldy = size_t(out) + 5;
                    std::vector<float> y(ldy * size_t(m), -7.0f);
                    k.gemm(c.w.data(), c.row_bytes, out, in, c.xq.data(), c.stride, m, y.data(), ldy);
                    for (int32_t j = 0; j < m; ++j) {
                        const float *got = &y[size_t(j) * ldy], *want = &c.ref[size_t(j) * out];
                        ASSERT_EQ(std::memcmp(got, want, size_t(out) * 4), 0)
                            << "m=" << m << " activation " << j << ": " << first_difference(got, want, size_t(out));
                        for (size_t r = size_t(out); r < ldy; ++r)
                            ASSERT_EQ(got[r], -7.0f) << "m=" << m << " wrote outside its rows";
                    }
                }
            }
    }
}

// Rows as long as the experts' (4096 values) at the rows call's m = 32 and an odd m, on 37 rows.
TEST_P(TilesVsScalar, GemmBitExactOnLongRows) {
    const memra_backend_v2 *t = table_;
    for (int32_t i = 0; i < t->kernel_count; ++i) {
        const memra_kernel_v2 &k = t->kernels[i];
        const TileCase &c = tile_case(k.qtype, 4096, 37);
        SCOPED_TRACE(std::string(GetParam()) + " " + expertkit::qtype_info(k.qtype).name);
        for (int32_t m : {32, 45}) {
            std::vector<float> y(size_t(37) * size_t(m));
            k.gemm(c.w.data(), c.row_bytes, 37, 4096, c.xq.data(), c.stride, m, y.data(), 37);
            ASSERT_EQ(std::memcmp(y.data(), c.ref.data(), y.size() * 4), 0)
                << "m=" << m << ": " << first_difference(y.data(), c.ref.data(), y.size());
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Builds, TilesVsScalar, ::testing::ValuesIn(tile_builds()),
                         [](const auto &i) { return std::string(i.param); });

}  // namespace
}  // namespace memra::plugin_tests
