// Accuracy of the token and rows calls against the two double-precision references of
// tools/expertkit/reference.h, with the tolerances derived in tools/expertkit/accuracy.h: every
// format alone, formats mixed across projections, non-unit scales, signed and zero route weights,
// n_ff != n_embd.
#include <gtest/gtest.h>

#include <cmath>

#include "accuracy.h"
#include "formats.h"
#include "lib_call.h"
#include "param_names.h"

namespace memra::tests {
namespace {

using expertkit::ExpertSpec;

constexpr int32_t kThreads = 2;
// Big enough for two Q8_K super-blocks of x and for h to span a Q8_K block; small enough that the
// scalar backend runs the whole suite in seconds.
constexpr int32_t kEmbd = 512;
constexpr int32_t kFf = 256;

void expect_accurate(const expertkit::Evaluation &ev, const std::vector<float> &out) {
    const expertkit::Verdict v = expertkit::judge(ev, out.data());
    EXPECT_TRUE(v.ok()) << v.describe();
}

void check_token(const std::vector<ExpertSpec> &specs, int32_t n_embd, int32_t n_ff,
                 uint64_t seed) {
    const testkit::TokenProblem p = testkit::make_token_problem(specs, n_embd, n_ff, seed);
    const std::vector<float> out = run_token(p, kThreads);
    expect_accurate(expertkit::evaluate_token(p.experts.data(), p.experts.count(), p.input.data()),
                    out);
}

void check_rows(const ExpertSpec &spec, int32_t rows, int32_t n_embd, int32_t n_ff,
                uint64_t seed) {
    SCOPED_TRACE("rows " + std::to_string(rows));
    const testkit::RowsProblem p = testkit::make_rows_problem(spec, rows, n_embd, n_ff, seed);
    const std::vector<float> out = run_rows(p, kThreads);
    expect_accurate(expertkit::evaluate_rows(p.experts[0], p.inputs.data(), rows,
                                           p.route_weights.data()),
                    out);
    // outputs[r] = route_weights[r] * y: a zero weight gives exact zeros.
    for (int32_t r = 0; r < rows; ++r) {
        if (p.route_weights[size_t(r)] != 0.0f) continue;
        for (int32_t i = 0; i < n_embd; ++i)
            ASSERT_EQ(out[size_t(r) * size_t(n_embd) + size_t(i)], 0.0f) << "row " << r;
    }
}

class EveryFormat : public ::testing::TestWithParam<int32_t> {};

TEST_P(EveryFormat, TokenWithThreeExperts) {
    const int32_t q = GetParam();
    check_token({expertkit::uniform_spec(q, 0.55f), expertkit::uniform_spec(q, 0.3f),
                 expertkit::uniform_spec(q, 0.15f)},
                kEmbd, kFf, 1000 + uint64_t(q));
}

TEST_P(EveryFormat, Rows) {
    const int32_t q = GetParam();
    for (int32_t rows : {1, 2, 5, 64}) check_rows(expertkit::uniform_spec(q), rows, kEmbd, kFf, 2000 + uint64_t(q));
}

INSTANTIATE_TEST_SUITE_P(Accuracy, EveryFormat, ::testing::ValuesIn(expertkit::all_qtypes()),
                         qtype_param_name);

// Experts that mix formats across their projections (and so activation formats: x is rounded
// differently for gate and up when their formats pair with different activations).
struct MixedCase {
    const char *name;
    int32_t n_embd, n_ff;
    std::vector<ExpertSpec> experts;
};

ExpertSpec spec(int32_t g, int32_t u, int32_t d, float route_weight, float sg = 1.0f,
                float su = 1.0f, float sd = 1.0f) {
    return ExpertSpec{g, u, d, sg, su, sd, route_weight};
}

std::vector<MixedCase> mixed_cases() {
    return {
        {"KQuantsAndIQuants", kEmbd, 768,
         {spec(MEMRA_QTYPE_Q4_K, MEMRA_QTYPE_IQ4_XS, MEMRA_QTYPE_Q6_K, 0.7f),
          spec(MEMRA_QTYPE_Q2_K, MEMRA_QTYPE_Q3_K, MEMRA_QTYPE_Q5_K, -0.4f),
          spec(MEMRA_QTYPE_IQ3_S, MEMRA_QTYPE_Q5_K, MEMRA_QTYPE_IQ4_XS, 0.0f)}},
        {"Bf16WithQ8_0", kEmbd, kFf,
         {spec(MEMRA_QTYPE_BF16, MEMRA_QTYPE_BF16, MEMRA_QTYPE_Q8_0, 0.5f),
          spec(MEMRA_QTYPE_Q8_0, MEMRA_QTYPE_BF16, MEMRA_QTYPE_BF16, 0.25f),
          spec(MEMRA_QTYPE_F32, MEMRA_QTYPE_Q4_0, MEMRA_QTYPE_BF16, 0.25f)}},
        {"Nvfp4WithQ2_K", kEmbd, kFf,
         {spec(MEMRA_QTYPE_NVFP4, MEMRA_QTYPE_NVFP4, MEMRA_QTYPE_Q2_K, 0.6f, 0.5f, 2.0f, 1.5f),
          spec(MEMRA_QTYPE_Q2_K, MEMRA_QTYPE_NVFP4, MEMRA_QTYPE_NVFP4, 0.4f, 1.0f, 1.0f, 0.75f)}},
        // Macro scales far from 1 (including a negative one) and route weights of both signs.
        {"ScalesAndSignedRouteWeights", kEmbd, kFf,
         {spec(MEMRA_QTYPE_Q8_0, MEMRA_QTYPE_Q4_K, MEMRA_QTYPE_Q4_0, 1.5f, 0.25f, 3.0f, -0.7f),
          spec(MEMRA_QTYPE_Q6_K, MEMRA_QTYPE_Q6_K, MEMRA_QTYPE_Q8_0, -0.8f, 4.0f, 0.5f, 2.0f),
          spec(MEMRA_QTYPE_F32, MEMRA_QTYPE_F32, MEMRA_QTYPE_F32, 0.3f, 0.1f, 10.0f, 0.2f)}},
        // Shapes that are not powers of two and n_ff > n_embd, with the 32-element formats.
        {"OddShapes", 96, 160,
         {spec(MEMRA_QTYPE_Q4_0, MEMRA_QTYPE_Q8_0, MEMRA_QTYPE_BF16, 0.9f),
          spec(MEMRA_QTYPE_BF16, MEMRA_QTYPE_F32, MEMRA_QTYPE_Q4_0, -0.2f)}},
    };
}

class MixedFormats : public ::testing::TestWithParam<MixedCase> {};

TEST_P(MixedFormats, Token) {
    const MixedCase &c = GetParam();
    check_token(c.experts, c.n_embd, c.n_ff, 3000);
}

TEST_P(MixedFormats, RowsOfEachExpert) {
    const MixedCase &c = GetParam();
    for (size_t i = 0; i < c.experts.size(); ++i) {
        SCOPED_TRACE("expert " + std::to_string(i));
        check_rows(c.experts[i], 7, c.n_embd, c.n_ff, 4000 + i);
    }
}

INSTANTIATE_TEST_SUITE_P(Accuracy, MixedFormats, ::testing::ValuesIn(mixed_cases()),
                         case_param_name<MixedCase>);

// A rows call is the token call's y per row: for one expert and one row, the token call with
// route weight w and the rows call with route weight w give the same numbers (both are held to
// the same references; this checks the two entry points agree with each other too).
TEST(Accuracy, RowsAgreeWithTokenCalls) {
    const testkit::RowsProblem p =
        testkit::make_rows_problem(expertkit::uniform_spec(MEMRA_QTYPE_Q4_K), 5, kEmbd, kFf, 77);
    const std::vector<float> rows_out = run_rows(p, kThreads);
    for (int32_t r = 0; r < p.rows; ++r) {
        CpuExpertV2 e = p.experts[0];
        e.route_weight = p.route_weights[size_t(r)];
        std::vector<float> out(kEmbd);
        const CallResult res = call_token(&e, 1, p.inputs.data() + size_t(r) * kEmbd, out.data(), kThreads);
        ASSERT_EQ(res.status, MEMRA_STATUS_OK) << res.message;
        const std::vector<double> tok(out.begin(), out.end());
        const float *row = rows_out.data() + size_t(r) * kEmbd;
        if (expertkit::l2_norm(tok) == 0) continue;  // zero route weight: checked in check_rows
        EXPECT_LE(expertkit::relative_l2(row, tok), 2 * expertkit::kFloatFloor) << "row " << r;
    }
}

}  // namespace
}  // namespace memra::tests
