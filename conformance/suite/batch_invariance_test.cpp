// Batch invariance (issue 26 item 2; formats spec §5.3): row i of a rows call with m rows equals,
// bit for bit, a token call of the same expert (route weight 1) on input row i, for every
// backend this CPU runs (the scalar plugin, the SIMD plugins, the emulated test builds), every
// format, m = 1..64 and 1 and 2 threads. The other suites hold each backend to scalar on the
// same path; this holds the two paths to each other inside each backend, where the rows path
// (gemm: weight blocks decoded once per tile for all m activations, lanes over output rows, tile
// units) and the token path (gemv: rows in tiles of 4, decoded in registers) share no code but
// the order of float operations.
//
// Cost (CI has 2 cores): the token results do not depend on m, so they are computed once per
// input row; the small expert (256 x 256, one super-block) runs every m, the realistic one
// (2048 x 768) a few, and the scalar plugin (about 0.4 GB/s) the small one at a few m only.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "activations.h"
#include "compute/moe.h"
#include "expert_set.h"
#include "formats.h"
#include "run.h"
#include "suite_backends.h"

namespace memra::conformance {
namespace {

constexpr int32_t kMaxRows = 64;

struct InvarianceShape {
    int32_t n_embd, n_ff;
    std::vector<int32_t> rows;  // the rows calls' m
};

std::vector<int32_t> every_m() {
    std::vector<int32_t> m;
    for (int32_t i = 1; i <= kMaxRows; ++i) m.push_back(i);
    return m;
}
const std::vector<int32_t> kFewM = {1, 2, 3, 5, 8, 17, 33, 64};

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// "" when every row of every rows call equals its token call; else the first difference.
std::string check(const BackendRegistry &registry, int32_t qtype, const InvarianceShape &shape, int32_t threads,
                  uint64_t seed) {
    std::mt19937_64 rng(seed);
    expertkit::ExpertSet set(shape.n_embd, shape.n_ff);
    const CpuExpertV2 &expert = set.add(expertkit::uniform_spec(qtype, 1.0f), rng);
    const std::vector<float> inputs = activation_rows(kMaxRows, shape.n_embd, rng);
    const size_t n = size_t(shape.n_embd);
    std::vector<float> token(kMaxRows * n);
    for (int32_t i = 0; i < kMaxRows; ++i)
        moe_token(registry, &expert, 1, inputs.data() + i * n, token.data() + i * n, threads);
    const std::vector<float> ones(kMaxRows, 1.0f);
    std::vector<float> rows(kMaxRows * n);
    for (int32_t m : shape.rows) {
        expert_rows(registry, expert, inputs.data(), m, ones.data(), rows.data(), threads);
        for (size_t k = 0; k < size_t(m) * n; ++k)
            if (!same_bits(rows[k], token[k]))
                return "m = " + std::to_string(m) + ", " + std::to_string(threads) + " thread(s), row " +
                       std::to_string(k / n) + " output " + std::to_string(k % n) + ": rows call " +
                       std::to_string(rows[k]) + ", token call " + std::to_string(token[k]);
    }
    return "";
}

using Param = std::tuple<std::string, int32_t>;  // backend ("scalar" or a subject), qtype

class BatchInvariance : public ::testing::TestWithParam<Param> {};

TEST_P(BatchInvariance, RowsCallRowEqualsTokenCall) {
    const auto &[name, qtype] = GetParam();
    const Backend *reference = nullptr, *subject = nullptr;
    if (name == "scalar") {
        reference = subject = build_backends().reference();
        ASSERT_NE(subject, nullptr) << build_backends().problem();
    } else {
        use_backend(name, reference, subject);
        if (IsSkipped() || HasFatalFailure()) return;
    }
    ASSERT_NE(subject->registry, nullptr) << subject->registry_problem;
    // The scalar plugin (about 0.4 GB/s; its gemm is its gemv per activation by construction):
    // the small expert at a few m only, which still takes the core's rows and token paths.
    const bool slow = subject == reference;
    std::vector<InvarianceShape> shapes{{256, 256, slow ? kFewM : every_m()}};
    if (!slow) shapes.push_back({2048, 768, {1, 7, 33, 64}});
    for (const InvarianceShape &shape : shapes)
        for (int32_t threads : {1, 2})
            EXPECT_EQ(check(*subject->registry, qtype, shape, threads, case_seed(1, 0, qtype, 7000 + shape.n_embd)), "")
                << subject->label << " " << expertkit::qtype_name(qtype) << " " << shape.n_embd << "x" << shape.n_ff;
}

std::vector<std::string> backend_names() {
    std::vector<std::string> names{"scalar"};
    for (const std::string &s : subject_names()) names.push_back(s);
    return names;
}

INSTANTIATE_TEST_SUITE_P(Backends, BatchInvariance,
                         ::testing::Combine(::testing::ValuesIn(backend_names()),
                                            ::testing::ValuesIn(expertkit::all_qtypes())),
                         [](const ::testing::TestParamInfo<Param> &info) {
                             return std::get<0>(info.param) + "_" + expertkit::qtype_name(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace memra::conformance
