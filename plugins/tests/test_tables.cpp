// The constexpr tables of plugins/common/tables.h equal the text tables they were generated from.
#include <gtest/gtest.h>

#include <cmath>

#include "common/tables.h"
#include "reference_data.h"

namespace memra::plugin_tests {
namespace {

TEST(Tables, Iq3sGrid) {
    const auto rows = testkit::load_table("iq3s_grid");
    ASSERT_EQ(rows.size(), 512u);
    for (size_t i = 0; i < 512; ++i)
        EXPECT_EQ(kIq3sGrid[i], uint32_t(std::stoul(rows[i][0], nullptr, 16))) << "entry " << i;
}

TEST(Tables, KvaluesIq4nl) {
    const auto rows = testkit::load_table("kvalues_iq4nl");
    ASSERT_EQ(rows.size(), 16u);
    for (size_t i = 0; i < 16; ++i) EXPECT_EQ(int(kValuesIq4nl[i]), std::stoi(rows[i][0])) << "code " << i;
}

TEST(Tables, KvaluesFp4IsDoubled) {
    const auto rows = testkit::load_table("kvalues_fp4");
    const auto truth = testkit::load_table("e2m1_true_values");
    ASSERT_EQ(rows.size(), 16u);
    ASSERT_EQ(truth.size(), 16u);
    for (size_t i = 0; i < 16; ++i) {
        EXPECT_EQ(int(kValuesFp4[i]), std::stoi(rows[i][0])) << "code " << i;
        EXPECT_EQ(double(kValuesFp4[i]) * 0.5, std::fabs(std::stod(truth[i][0])) * (i >= 8 ? -1 : 1))
            << "code " << i;
    }
}

}  // namespace
}  // namespace memra::plugin_tests
