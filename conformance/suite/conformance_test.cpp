// The conformance suite: every backend plugin of the build tree and the emulated test builds,
// times every weight format, times the shape plan of ../runner/plan.h, against the scalar plugin.
//
// Backends are the real modules as built, found and gated by the core's own loader
// (load_plugins on the build tree's backend directory with detect_cpu_features(), minus
// MEMRA_CPU_EXPERT_DISABLE_FEATURES): one this CPU cannot run is skipped with the loader's
// reason and never loaded. The parameters come from the manifests found, so a plugin added to
// the tree is covered without touching this file.
//
// Two tests per backend, format and shape class:
//  - Kernels: gemv, gemm (m = 1, 2, 5, 64) and dequantize_row, plus the plugin's own activation
//    quantizer, bit for bit against the scalar plugin on the same quantized activations. Every
//    format is bit-exact by design, F32 and BF16 included, so the assertion is identity.
//  - Calls: memra::expert_rows (rows 1, 2, 5, 64) and memra::moe_token through a BackendRegistry
//    with the backend forced, against the scalar-forced registry: bit-identical as well, for
//    the reasons call_case.h gives (same kernels' bits, same core code around them).
//
// Shape classes: "small" (smallest legal in_features, tails, out_features 1 / 7 / 33) and
// "realistic" (4096 x 1536 and 2048 x 768 in the default scope of plan.h: row tiles of the big
// matrices and 2048 x 768 calls). Scope::Full, whose whole 4096 x 1536 matrices take the scalar
// reference minutes, is left to `memra-conformance --full`: ctest stays at a few seconds per
// core for the whole suite. kernel_edges_test.cpp adds, per backend, the inputs where kernels
// most easily part from scalar (BF16 under DAZ/FTZ, the quantizers' rounding edges).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "expert_set.h"
#include "formats.h"
#include "compute/moe.h"
#include "plan.h"
#include "run.h"
#include "suite_backends.h"
#include "synthetic_weights.h"

namespace memra::conformance {
namespace {

constexpr uint64_t kSeed = 1;

enum class ShapeClass { Small, Realistic };

Plan plan_for(int32_t qtype, ShapeClass c) {
    return c == ShapeClass::Small ? small_plan(qtype) : realistic_plan(qtype, Scope::Default);
}

using Param = std::tuple<std::string, int32_t, ShapeClass>;  // backend, qtype, shapes

std::string param_name(const ::testing::TestParamInfo<Param> &info) {
    const auto &[backend, qtype, shapes] = info.param;
    return backend + "_" + expertkit::qtype_name(qtype) + (shapes == ShapeClass::Small ? "_small" : "_realistic");
}

class Conformance : public ::testing::TestWithParam<Param> {
protected:
    // The backend under test and the reference, or a skip / failure saying why there is none.
    void SetUp() override {
        use_backend(std::get<0>(GetParam()), reference_, subject_);
        if (IsSkipped() || HasFatalFailure()) return;
        // A SIMD build without a kernel for a format (every one serves all of them) fails. A
        // rows-only build (plugins/amx) lacking a format leaves it to the plugins below: its
        // kernel test has nothing to compare, its calls test checks the forced selection.
        qtype_ = std::get<1>(GetParam());
        if (serves_token_path(*subject_->table)) {
            ASSERT_NE(find_kernel(*subject_->table, qtype_), nullptr)
                << subject_->label << " has no " << expertkit::qtype_name(qtype_) << " kernel";
        }
        plan_ = plan_for(qtype_, std::get<2>(GetParam()));
    }

    const Backend *reference_ = nullptr;
    const Backend *subject_ = nullptr;
    int32_t qtype_ = 0;
    Plan plan_;
};

TEST_P(Conformance, KernelsBitExact) {
    int32_t index = 0;
    for (const KernelShape &shape : plan_.kernels) {
        const KernelCase c(*reference_->table, qtype_, shape, case_seed(kSeed, 0, qtype_, index++));
        EXPECT_EQ(c.compare(*subject_->table), "") << subject_->label << " " << expertkit::qtype_name(qtype_) << " "
                                                   << shape.name();
    }
}

TEST_P(Conformance, CallsBitIdentical) {
    ASSERT_NE(subject_->registry, nullptr) << subject_->registry_problem;
    int32_t index = 0;
    for (const CallShape &shape : plan_.calls) {
        const CallCase c(*reference_->registry, qtype_, shape, case_seed(kSeed, 0, qtype_, 1000 + index++));
        EXPECT_EQ(c.compare(*subject_->registry), "") << subject_->label << " " << expertkit::qtype_name(qtype_) << " "
                                                      << shape.name();
    }
}

INSTANTIATE_TEST_SUITE_P(Backends, Conformance,
                         ::testing::Combine(::testing::ValuesIn(subject_names()),
                                            ::testing::ValuesIn(expertkit::all_qtypes()),
                                            ::testing::Values(ShapeClass::Small, ShapeClass::Realistic)),
                         param_name);

// A NaN or an infinity in an input row reaches every output of that row as a non-finite value in
// every backend and format (a quantized activation block holding one gets a NaN scale:
// plugins/common/quantize.cpp), instead of a silently finite wrong result; the other rows of
// the same call are unaffected. CallsBitIdentical checks that the backends agree on such rows;
// this checks what they agree on.
TEST(ConformanceNonFinite, NonFiniteInputReachesEveryOutputOfItsRow) {
    std::vector<const Backend *> all{build_backends().reference()};
    for (const Backend &b : build_backends().subjects())
        if (b.runnable() && b.registry) all.push_back(&b);
    ASSERT_NE(all.front(), nullptr) << build_backends().problem();
    constexpr int32_t kEmbd = 256, kFf = 256;  // one block of every format, Q8_K's 256 included
    for (int32_t qtype : expertkit::all_qtypes()) {
        std::mt19937_64 rng(case_seed(kSeed, 0, qtype, 5000));
        expertkit::ExpertSet set(kEmbd, kFf);
        const CpuExpertV2 &expert = set.add(expertkit::uniform_spec(qtype), rng);
        std::vector<float> inputs = expertkit::random_input(3 * kEmbd, rng);
        inputs[kEmbd + 17] = std::numeric_limits<float>::quiet_NaN();       // row 1
        inputs[2 * kEmbd + 200] = -std::numeric_limits<float>::infinity();  // row 2
        const std::vector<float> route_weights{1.0f, 0.5f, 0.25f};
        for (const Backend *b : all) {
            SCOPED_TRACE(b->label + " " + expertkit::qtype_name(qtype));
            std::vector<float> out(3 * kEmbd, 0.0f);
            expert_rows(*b->registry, expert, inputs.data(), 3, route_weights.data(), out.data(), 1);
            for (int32_t j = 0; j < kEmbd; ++j) {
                ASSERT_TRUE(std::isfinite(out[size_t(j)])) << "finite row, output " << j;
                ASSERT_FALSE(std::isfinite(out[size_t(kEmbd + j)])) << "NaN row, output " << j;
                ASSERT_FALSE(std::isfinite(out[size_t(2 * kEmbd + j)])) << "-inf row, output " << j;
            }
        }
    }
}

// The plan holds the shapes the conformance issue names, so that a later edit of plan.cpp
// cannot quietly drop one.
TEST(ConformancePlan, CoversTheRequiredShapes) {
    for (int32_t qtype : expertkit::all_qtypes()) {
        SCOPED_TRACE(expertkit::qtype_name(qtype));
        const int32_t block = expertkit::qtype_info(qtype).block_elems;
        const Plan small = small_plan(qtype);
        for (int32_t out : {1, 7, 33}) {
            bool found = false;
            for (const KernelShape &s : small.kernels) found |= s.in == block && s.out == out && s.acts == 64;
            EXPECT_TRUE(found) << "in=" << block << " out=" << out;
        }
        for (Scope scope : {Scope::Default, Scope::Full}) {
            const Plan big = realistic_plan(qtype, scope);
            for (const auto &[n_embd, n_ff] : {std::pair{4096, 1536}, std::pair{2048, 768}}) {
                bool gate_up = false, down = false;
                for (const KernelShape &s : big.kernels) {
                    gate_up |= s.in == n_embd && (scope == Scope::Default || s.out == n_ff);
                    down |= s.in == n_ff && (scope == Scope::Default || s.out == n_embd);
                }
                EXPECT_TRUE(gate_up && down) << n_embd << "x" << n_ff;
            }
            bool long_rows = false;  // past the token path's activation window, gemm up to 64
            for (const KernelShape &s : big.kernels) long_rows |= s.in >= 16640 && s.acts == 64;
            EXPECT_TRUE(long_rows);
        }
        std::vector<int32_t> rows;
        for (const CallShape &s : small.calls) rows.insert(rows.end(), s.rows.begin(), s.rows.end());
        for (int32_t r : {1, 2, 5, 64}) EXPECT_NE(std::find(rows.begin(), rows.end(), r), rows.end()) << "rows " << r;
        EXPECT_EQ(small.calls.front().n_embd, block) << "the smallest legal expert";
    }
}

// With every SIMD feature hidden, no SIMD backend is runnable and each says which features it
// lacks: the loader decided from the manifest, before any dlopen.
TEST(ConformanceBackends, WhatTheCpuCannotRunIsSkippedWithTheReason) {
    BackendLocations where;
    where.library_backend_dir = MEMRA_BACKEND_BUILD_DIR;
    where.test_backend_dir = MEMRA_TEST_BACKEND_BUILD_DIR;
    const uint64_t simd = ~MEMRA_CPU_BIT(MEMRA_CPU_SSE2);
    const BackendSet set(where, detect_cpu_features(), simd);
    ASSERT_NE(set.reference(), nullptr) << set.problem();
    ASSERT_FALSE(set.subjects().empty());
    for (const Backend &b : set.subjects()) {
        EXPECT_FALSE(b.runnable()) << b.label;
        EXPECT_EQ(b.registry, nullptr) << b.label;
        EXPECT_EQ(b.skip_reason.rfind("cpu lacks ", 0), 0u) << b.label << ": " << b.skip_reason;
    }
}

// The checks themselves can fail: a plugin whose Q8_0 gemv is one ulp off in one row is caught
// by the kernel check and, through the token path, by the call check; its other formats pass.
TEST(ConformanceChecks, CatchAOneUlpDifference) {
    BackendLocations where;
    where.library_backend_dir = MEMRA_BACKEND_BUILD_DIR;
    where.plugin_dir = MEMRA_BROKEN_BACKEND_DIR;
    const BackendSet set(where, detect_cpu_features(), 0);
    ASSERT_NE(set.reference(), nullptr) << set.problem();
    const Backend *broken = nullptr;
    for (const Backend &b : set.subjects())
        if (b.plugin_name == "avx2") broken = &b;
    ASSERT_TRUE(broken && broken->runnable() && broken->registry);
    ASSERT_NE(broken->module.find("memra-backend-broken"), std::string::npos) << broken->module;

    const KernelShape kernel_shape{256, 7, 5};
    const KernelCase q8_0(*set.reference()->table, MEMRA_QTYPE_Q8_0, kernel_shape, 3);
    EXPECT_EQ(q8_0.compare(*broken->table).rfind("gemv, activation 0, row at 6: got ", 0), 0u)
        << q8_0.compare(*broken->table);
    const KernelCase q4_0(*set.reference()->table, MEMRA_QTYPE_Q4_0, kernel_shape, 3);
    EXPECT_EQ(q4_0.compare(*broken->table), "");

    const CallShape call_shape{64, 96, {1, 5}, 2};
    const CallCase calls(*set.reference()->registry, MEMRA_QTYPE_Q8_0, call_shape, 4);
    EXPECT_EQ(calls.compare(*broken->registry).rfind("moe_token of 2 experts, output at ", 0), 0u)
        << calls.compare(*broken->registry);
}

}  // namespace
}  // namespace memra::conformance
