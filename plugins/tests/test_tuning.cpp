// Kernel tuning (memra_backend_v2::tune, simd/tuning.h) picks among forms with the same results:
// under every tuning, each SIMD plugin's token path equals the scalar reference bit for bit, on
// rows that are whole 16-row panels and a remainder (37 = 2 x 16 + 5: the panels' token form hands
// the last rows to the token path's own form), so every form a tuning selects runs here whatever
// vendor this CPU is. (The core's loader applies the process's tuning: conformance's
// memra-conformance.tuning-* tests run the whole suite under each.)
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "formats.h"
#include "memra/cpu_experts.h"
#include "simd_builds.h"
#include "synthetic_weights.h"
#include "test_util.h"

namespace memra::plugin_tests {
namespace {

class Tuning : public ::testing::TestWithParam<const char *> {
protected:
    void SetUp() override { use_build(GetParam(), table_); }
    void TearDown() override {
        if (table_ && table_->tune) table_->tune(MEMRA_TUNING_GENERIC);  // as a loader-less process has it
    }
    const memra_backend_v2 *table_ = nullptr;
};

TEST_P(Tuning, EveryTuningGivesTheScalarBits) {
    const memra_backend_v2 *t = table_;
    ASSERT_GE(t->struct_size, sizeof(memra_backend_v2));
    ASSERT_NE(t->tune, nullptr) << "every SIMD build takes the core's tuning";
    if (!serves_token_path(t)) GTEST_SKIP() << GetParam() << " serves no token path";
    constexpr int32_t in = 1024, out = 37;
    for (int32_t i = 0; i < t->kernel_count; ++i) {
        const memra_kernel_v2 &k = t->kernels[i];
        if (!k.gemv) continue;
        const memra_qtype_info &info = expertkit::qtype_info(k.qtype);
        std::mt19937_64 rng(uint64_t(k.qtype) * 131u + 7u);
        const std::vector<uint8_t> w = expertkit::random_weights(k.qtype, out, in, rng);
        const std::vector<float> x = expertkit::random_input(in, rng);
        const std::vector<uint8_t> xq = expertkit::quantize_activation(info.act_format, x.data(), in);
        const size_t row_bytes = expertkit::row_bytes(k.qtype, in);
        std::vector<float> want(out);
        scalar_kernel(k.qtype).gemv(w.data(), row_bytes, out, in, xq.data(), want.data());
        for (int32_t tuning : {MEMRA_TUNING_GENERIC, MEMRA_TUNING_INTEL, MEMRA_TUNING_AMD}) {
            t->tune(tuning);
            std::vector<float> got(out, -7.0f);
            k.gemv(w.data(), row_bytes, out, in, xq.data(), got.data());
            EXPECT_EQ(std::memcmp(got.data(), want.data(), sizeof(float) * out), 0)
                << GetParam() << " " << info.name << " tuning " << tuning << ": "
                << first_difference(got.data(), want.data(), out);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Plugins, Tuning, ::testing::ValuesIn(simd_rows(false)),
                         [](const auto &info) { return std::string(info.param); });

}  // namespace
}  // namespace memra::plugin_tests
