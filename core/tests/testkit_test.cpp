// The testkit checked on its own, so that the accuracy suites rest on tested ground: synthetic
// weights look like a real model's, activation rounding is what rounding_grid says, and the
// noise model of reference.cpp predicts the error ggml's activation scheme really makes.
#include <gtest/gtest.h>

#include <cmath>

#include "accuracy.h"
#include "formats.h"
#include "param_names.h"
#include "problems.h"
#include "synthetic_weights.h"

namespace memra::tests {
namespace {

class EveryFormat : public ::testing::TestWithParam<int32_t> {};

// Finite values with an rms in the range real FFN weights have, and blocks that differ.
TEST_P(EveryFormat, SyntheticWeightsLookLikeAModels) {
    const int32_t q = GetParam();
    std::mt19937_64 rng(99);
    const std::vector<uint8_t> w = expertkit::random_weights(q, 64, 512, rng);
    ASSERT_EQ(w.size(), 64 * expertkit::row_bytes(q, 512));
    const std::vector<float> v = expertkit::dequantize(q, w.data(), 64, 512);
    double sum2 = 0, row0 = 0, row1 = 0;
    for (size_t i = 0; i < v.size(); ++i) {
        ASSERT_TRUE(std::isfinite(v[i])) << "value " << i;
        sum2 += double(v[i]) * v[i];
        if (i < 512) row0 += double(v[i]) * v[i];
        else if (i < 1024) row1 += double(v[i]) * v[i];
    }
    const double rms = std::sqrt(sum2 / double(v.size()));
    EXPECT_GT(rms, 0.01);
    EXPECT_LT(rms, 0.1);
    EXPECT_NE(row0, row1) << "rows are not random";
}

// Each rounded activation lies within half a step of the input, which is what the noise model
// and the flip allowance assume.
TEST_P(EveryFormat, ActivationRoundingStaysWithinHalfAStep) {
    const int32_t act = expertkit::qtype_info(GetParam()).act_format;
    std::mt19937_64 rng(7);
    const std::vector<float> x = expertkit::random_input(512, rng);
    const std::vector<float> r = expertkit::roundtrip_activation(act, x.data(), 512);
    const std::vector<double> xd(x.begin(), x.end());
    const expertkit::RoundingGrid grid = expertkit::rounding_grid(act, xd.data(), 512);
    // Q8_0 stores d as fp16 (relative error <= 2^-11) while its quants were rounded with the
    // exact scale, so |q| <= 127 quants may drift by up to 127 * 2^-11 of a step more.
    const double slack = act == MEMRA_ACT_Q8_0 ? 127.0 / 2048.0 : 0.0;
    for (size_t i = 0; i < x.size(); ++i)
        EXPECT_LE(std::fabs(double(r[i]) - x[i]), grid.step[i] * (0.5 + slack) + 1e-12) << "element " << i;
}

// (b) - (a) is the error of ggml's activation scheme; the first-order model must predict its size
// (within +-50%; in practice within ~10%), otherwise tolerances derived from it mean nothing.
TEST_P(EveryFormat, NoiseModelPredictsTheActivationRoundingError) {
    const int32_t q = GetParam();
    const testkit::TokenProblem p = testkit::make_token_problem(
        {expertkit::uniform_spec(q, 0.7f), expertkit::uniform_spec(q, -0.3f)}, 512, 256, 123);
    const expertkit::Evaluation ev = expertkit::evaluate_token(p.experts.data(), 2, p.input.data());
    const double actual = expertkit::relative_l2(ev.quant_aware, ev.exact);
    const double predicted = ev.predicted_noise / expertkit::l2_norm(ev.exact);
    if (q == MEMRA_QTYPE_F32) {
        EXPECT_EQ(predicted, 0.0);
        EXPECT_LT(actual, 1e-7) << "only the float conversion of h differs";
        return;
    }
    EXPECT_GT(actual, 0.5 * predicted) << "predicted " << predicted;
    EXPECT_LT(actual, 1.5 * predicted) << "predicted " << predicted;
    // And the tolerance the suites apply stays well below what a real bug produces (a wrong scale,
    // row or format is off by tens of percent).
    EXPECT_LT(2 * predicted, 0.1);
}

INSTANTIATE_TEST_SUITE_P(Testkit, EveryFormat, ::testing::ValuesIn(expertkit::all_qtypes()),
                         qtype_param_name);

// The references themselves pass their own judgement, and a wrong result fails it.
TEST(Testkit, JudgeAcceptsTheReferenceAndRejectsAPerturbation) {
    const testkit::TokenProblem p = testkit::make_token_problem(
        {expertkit::uniform_spec(MEMRA_QTYPE_Q4_K, 1.0f)}, 512, 256, 5);
    const expertkit::Evaluation ev = expertkit::evaluate_token(p.experts.data(), 1, p.input.data());
    std::vector<float> out(ev.quant_aware.begin(), ev.quant_aware.end());
    EXPECT_TRUE(expertkit::judge(ev, out.data()).ok()) << expertkit::judge(ev, out.data()).describe();
    out[17] += 0.05f * float(expertkit::l2_norm(ev.quant_aware));  // one output off by 5% of the norm
    EXPECT_FALSE(expertkit::judge(ev, out.data()).ok());
}

}  // namespace
}  // namespace memra::tests
