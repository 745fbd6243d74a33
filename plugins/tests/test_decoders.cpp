// Every decoder against every block of examples/<type>.txt (ggml's own dequantizer output: one
// real and one random-bit block per type), every value compared by bit pattern. The %.9g text
// round-trips float32 and ggml prints -0 as "-0", so bit equality is the exact criterion
// (including the spec's -0.0 cases of Q4_0, Q6_K, Q3_K, IQ3_S).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "reference_data.h"
#include "test_util.h"

namespace memra::plugin_tests {
namespace {

class Decoder : public ::testing::TestWithParam<const char *> {};

TEST_P(Decoder, MatchesGgmlDequantizerBitForBit) {
    const memra_qtype_info &info = qtype_by_name(GetParam());
    const memra_kernel_v2 &kernel = scalar_kernel(info.id);
    const auto examples = testkit::load_examples(GetParam());
    ASSERT_GE(examples.size(), 2u);
    for (const auto &ex : examples) {
        const int32_t n = int32_t(ex.values.size());
        ASSERT_EQ(n % info.block_elems, 0) << ex.name;
        ASSERT_EQ(ex.bytes.size(), size_t(n / info.block_elems) * size_t(info.block_bytes)) << ex.name;
        std::vector<float> got(size_t(n), -12345.0f);
        kernel.dequantize_row(ex.bytes.data(), n, got.data());
        int mismatches = 0;
        for (int32_t i = 0; i < n; ++i) {
            const bool same = std::isnan(ex.values[i]) ? std::isnan(got[i]) : bits(got[i]) == bits(ex.values[i]);
            if (!same && ++mismatches <= 8)
                ADD_FAILURE() << GetParam() << " " << ex.name << " element " << i << ": got " << got[i]
                              << " (0x" << std::hex << bits(got[i]) << "), ggml " << ex.values[i] << " (0x"
                              << bits(ex.values[i]) << std::dec << ")";
        }
        EXPECT_EQ(mismatches, 0) << GetParam() << " " << ex.name;
    }
}

INSTANTIATE_TEST_SUITE_P(AllFormats, Decoder,
                         ::testing::ValuesIn(kAllNames),
                         [](const auto &info) { return std::string(info.param); });

// The table's decoders must cover every format of memra_qtype_table, in a multi-block row too
// (a decoder that ignored the block index would pass the single-block examples above).
TEST(Decoder, MultiBlockRowIsConcatenationOfBlocks) {
    for (const memra_qtype_info &info : memra_qtype_table) {
        const auto examples = testkit::load_examples(info.name);
        std::vector<uint8_t> row;
        std::vector<float> want;
        for (const auto &ex : examples) {
            row.insert(row.end(), ex.bytes.begin(), ex.bytes.end());
            want.insert(want.end(), ex.values.begin(), ex.values.end());
        }
        std::vector<float> got(want.size());
        scalar_kernel(info.id).dequantize_row(row.data(), int32_t(want.size()), got.data());
        for (size_t i = 0; i < want.size(); ++i)
            ASSERT_EQ(bits(got[i]), bits(want[i])) << info.name << " element " << i;
    }
}

}  // namespace
}  // namespace memra::plugin_tests
