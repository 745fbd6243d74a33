// The canonical activation quantizers: Q8_0 (variant A) and Q8_K reproduce ggml's act_q_hex of
// every dot trial byte for byte from act_f32_hex; the edge cases that ggml leaves undefined
// (all-zero Q8_K bsums) or that only non-finite input reaches are pinned down.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "common/act_layout.h"
#include "common/fp_convert.h"
#include "common/quantize.h"
#include "memra/qtypes.h"
#include "reference_data.h"
#include "test_util.h"

namespace memra::plugin_tests {
namespace {

// Every dot file: the block formats of the list, and ggml types outside it whose trials ggml
// also runs against Q8_0 activations (iq4_nl, mxfp4): the activation side is the same quantizer.
const std::vector<const char *> kAllDotFiles = [] {
    std::vector<const char *> names = kQuantizedNames;
    for (const char *extra : {"iq4_nl", "mxfp4"})
        if (std::find_if(names.begin(), names.end(), [&](const char *n) { return std::strcmp(n, extra) == 0; }) == names.end())
            names.push_back(extra);
    return names;
}();

// The list's activation format for its formats; Q8_0 for the others (as ggml pairs them).
int32_t act_of(const std::string &name) {
    for (const memra_qtype_info &f : memra_qtype_table)
        if (name == f.name) return f.act_format;
    return MEMRA_ACT_Q8_0;
}

class Quantizer : public ::testing::TestWithParam<const char *> {};

TEST_P(Quantizer, ReproducesGgmlActivationBytes) {
    const std::string name = GetParam();
    const int32_t act = act_of(name);
    for (const auto &trial : testkit::load_dot_trials(name)) {
        const int32_t n = int32_t(trial.act_f32.size());
        ASSERT_EQ(trial.act_q.size(), memra_act_row_bytes(act, n));
        std::vector<uint8_t> got(trial.act_q.size(), 0xAA);
        memra_scalar_backend()->quantize[act](trial.act_f32.data(), n, got.data());
        for (size_t i = 0; i < got.size(); ++i)
            ASSERT_EQ(int(got[i]), int(trial.act_q[i])) << name << " trial " << trial.index << " byte " << i;
    }
}

INSTANTIATE_TEST_SUITE_P(AllDotFiles, Quantizer, ::testing::ValuesIn(kAllDotFiles),
                         [](const auto &info) { return std::string(info.param); });

TEST(QuantizerQ8K, AllZeroBlockIsAllZeroBytes) {
    std::vector<float> x(512, 0.0f);
    x[300] = 1.0f;  // second block non-zero
    std::vector<uint8_t> out(2 * q8_K_act::kBlockBytes, 0xAA);
    quantize_row_q8_K(x.data(), 512, out.data());
    for (size_t i = 0; i < q8_K_act::kBlockBytes; ++i) ASSERT_EQ(out[i], 0) << "byte " << i;
    const uint8_t *b1 = out.data() + q8_K_act::kBlockBytes;
    EXPECT_EQ(q8_K_act::qs(b1)[44], -127);
    EXPECT_EQ(q8_K_act::bsum(b1, 2), -127);
    EXPECT_EQ(q8_K_act::d(b1), 1.0f / (-127.0f / 1.0f));
}

TEST(QuantizerQ8K, FirstLargestMagnitudeFixesTheSign) {
    std::vector<float> x(256, 0.25f);
    x[10] = -2.0f;
    x[20] = 2.0f;  // same magnitude later: does not win
    std::vector<uint8_t> out(q8_K_act::kBlockBytes);
    quantize_row_q8_K(x.data(), 256, out.data());
    EXPECT_EQ(q8_K_act::qs(out.data())[10], -127);
    EXPECT_EQ(q8_K_act::qs(out.data())[20], 127);
    EXPECT_GT(q8_K_act::d(out.data()), 0.0f);  // d has the opposite sign of max
    int32_t sum = 0;
    for (int t = 0; t < 16; ++t) sum += q8_K_act::qs(out.data())[t];
    EXPECT_EQ(q8_K_act::bsum(out.data(), 0), sum);
}

TEST(QuantizerQ8_0, UsesTiesToEvenAnd127OverAmax) {
    // amax = 127 makes id = 1 exactly, so x * id = x and the rounding is visible directly.
    std::vector<float> x(32, 0.0f);
    x[0] = 127.0f;
    x[1] = 2.5f;   // -> 2 (ties to even; the reference variant would give 3)
    x[2] = -3.5f;  // -> -4
    x[3] = 0.5f;   // -> 0
    std::vector<uint8_t> out(q8_0_act::kBlockBytes);
    quantize_row_q8_0(x.data(), 32, out.data());
    const int8_t *qs = q8_0_act::qs(out.data());
    EXPECT_EQ(qs[0], 127);
    EXPECT_EQ(qs[1], 2);
    EXPECT_EQ(qs[2], -4);
    EXPECT_EQ(qs[3], 0);
    EXPECT_EQ(load_u16(out.data()), f32_to_fp16(1.0f));
}

TEST(QuantizerQ8_0, ZeroAndNonFiniteBlocksAreDefined) {
    // Block 0 all zero: d = 0, codes 0. Blocks 1 (inf), 2 (NaN) and 3 (-inf next to zeros):
    // NaN scale and zero codes, so any dot with them is NaN (plugins/common/quantize.cpp).
    std::vector<float> x(128, 0.0f);
    x[40] = std::numeric_limits<float>::infinity();
    x[41] = 1.0f;
    x[74] = std::numeric_limits<float>::quiet_NaN();
    x[75] = -3.0f;
    x[100] = -std::numeric_limits<float>::infinity();
    std::vector<uint8_t> out(4 * q8_0_act::kBlockBytes, 0xAA);
    quantize_row_q8_0(x.data(), 128, out.data());
    for (size_t i = 0; i < q8_0_act::kBlockBytes; ++i) ASSERT_EQ(out[i], 0) << "byte " << i;
    for (int b = 1; b < 4; ++b) {
        const uint8_t *blk = out.data() + b * q8_0_act::kBlockBytes;
        EXPECT_EQ(load_u16(blk), 0x7E00) << "block " << b;  // fp16 quiet NaN
        for (int i = 0; i < 32; ++i) ASSERT_EQ(q8_0_act::qs(blk)[i], 0) << "block " << b << " code " << i;
    }
}

TEST(QuantizerQ8K, NonFiniteBlockHasNaNScaleAndZeroCodes) {
    // Block 0: a NaN among zeros (amax ignores NaN, so this must not read as an all-zero block);
    // block 1: an inf among normal values.
    std::vector<float> x(512, 0.0f);
    x[7] = std::numeric_limits<float>::quiet_NaN();
    for (int i = 256; i < 512; ++i) x[i] = 0.5f * float(i % 7) - 1.0f;
    x[300] = std::numeric_limits<float>::infinity();
    std::vector<uint8_t> out(2 * q8_K_act::kBlockBytes, 0xAA);
    quantize_row_q8_K(x.data(), 512, out.data());
    for (int b = 0; b < 2; ++b) {
        const uint8_t *blk = out.data() + b * q8_K_act::kBlockBytes;
        EXPECT_TRUE(std::isnan(q8_K_act::d(blk))) << "block " << b;
        for (size_t i = 4; i < q8_K_act::kBlockBytes; ++i) ASSERT_EQ(blk[i], 0) << "block " << b << " byte " << i;
    }
}

TEST(QuantizerPlain, F32CopyAndBf16) {
    const float x[4] = {1.0f, -0.0f, from_bits(0x3F818000), from_bits(0x7F800001)};
    float f[4];
    quantize_row_f32(x, 4, f);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(bits(f[i]), bits(x[i]));
    uint16_t b[4];
    quantize_row_bf16(x, 4, b);
    EXPECT_EQ(b[0], 0x3F80);
    EXPECT_EQ(b[1], 0x8000);
    EXPECT_EQ(b[2], 0x3F82);
    EXPECT_EQ(b[3], 0x7FC0);
}

}  // namespace
}  // namespace memra::plugin_tests
