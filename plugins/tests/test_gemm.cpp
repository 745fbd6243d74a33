// gemm == gemv bit for bit (backend.h's contract) for every format, m = 1, 2, 5, 64, with a
// padded xq_stride and ldy so that stride mistakes show.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "formats.h"
#include "synthetic_weights.h"
#include "test_util.h"

namespace memra::plugin_tests {
namespace {

class Gemm : public ::testing::TestWithParam<const char *> {};

TEST_P(Gemm, EqualsGemvBitForBit) {
    const memra_qtype_info &info = qtype_by_name(GetParam());
    const memra_kernel_v2 &k = scalar_kernel(info.id);
    std::mt19937_64 rng(uint64_t(info.id) * 1000 + 17);
    const int32_t rows = 7, n = 512;
    const size_t row_bytes = size_t(n / info.block_elems) * size_t(info.block_bytes);
    const std::vector<uint8_t> w = expertkit::random_weights(info.id, rows, n, rng);
    ASSERT_EQ(w.size(), rows * row_bytes);
    const size_t act_bytes = memra_act_row_bytes(info.act_format, n);
    const size_t stride = act_bytes + 40;  // not a multiple of anything in particular
    for (int32_t m : {1, 2, 5, 64}) {
        std::vector<uint8_t> xq(stride * size_t(m), 0xCD);
        for (int32_t j = 0; j < m; ++j) {
            const std::vector<float> x = expertkit::random_input(n, rng);
            const std::vector<uint8_t> q = expertkit::quantize_activation(info.act_format, x.data(), n);
            std::memcpy(&xq[size_t(j) * stride], q.data(), act_bytes);
        }
        const size_t ldy = rows + 3;
        std::vector<float> y(ldy * size_t(m), -7.0f);
        k.gemm(w.data(), row_bytes, rows, n, xq.data(), stride, m, y.data(), ldy);
        for (int32_t j = 0; j < m; ++j) {
            std::vector<float> yv(rows);
            k.gemv(w.data(), row_bytes, rows, n, &xq[size_t(j) * stride], yv.data());
            for (int32_t r = 0; r < rows; ++r)
                ASSERT_EQ(bits(y[size_t(j) * ldy + size_t(r)]), bits(yv[size_t(r)]))
                    << info.name << " m=" << m << " j=" << j << " r=" << r;
            for (size_t r = rows; r < ldy; ++r)
                ASSERT_EQ(y[size_t(j) * ldy + r], -7.0f) << "gemm wrote outside its rows";
        }
    }
}

INSTANTIATE_TEST_SUITE_P(AllFormats, Gemm, ::testing::ValuesIn(kAllNames),
                         [](const auto &info) { return std::string(info.param); });

}  // namespace
}  // namespace memra::plugin_tests
