// Every invalid input CONTRACT.md lists ("Validation"), for the token and the rows call: the
// status, the message, untouched buffers, error-buffer truncation, and that the library keeps
// working afterwards.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <ostream>
#include <random>

#include "formats.h"
#include "lib_call.h"
#include "param_names.h"
#include "rejection.h"
#include "synthetic_weights.h"

namespace memra::tests {
namespace {

using expertkit::ExpertSpec;

constexpr int32_t kEmbd = 256;
constexpr int32_t kFf = 256;
constexpr size_t kGuard = 16;  // floats past the output that must stay untouched too
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Three experts of different formats (so that block sizes 32, 64 and 256 are all present).
expertkit::ExpertSet make_experts(std::mt19937_64 &rng) {
    expertkit::ExpertSet set(kEmbd, kFf);
    set.add(expertkit::uniform_spec(MEMRA_QTYPE_Q8_0, 0.5f), rng);
    set.add(ExpertSpec{MEMRA_QTYPE_Q4_K, MEMRA_QTYPE_IQ4_XS, MEMRA_QTYPE_Q6_K, 1, 1, 1, 0.3f}, rng);
    set.add(ExpertSpec{MEMRA_QTYPE_BF16, MEMRA_QTYPE_Q4_0, MEMRA_QTYPE_NVFP4, 1, 1, 1, 0.2f}, rng);
    return set;
}

// The arguments of one call, valid until a case breaks one of them.
struct Args {
    std::vector<CpuExpertV2> experts;
    bool null_experts = false, null_input = false, null_output = false;
    int32_t count = 3;
    int32_t threads = 2;
    // rows call only
    int32_t rows = 3;
    bool null_route_weights = false;
};

using Breakage = std::function<void(Args &, expertkit::ExpertSet &, std::mt19937_64 &)>;

struct InvalidCase {
    std::string name;
    Breakage breakage;
    Rejection expected;
};

// What GoogleTest prints for a case (in a failure, --gtest_list_tests): its name. Without this it
// dumps the struct's bytes, the uninitialised padding included, which valgrind reports (T1 in
// docs/hardening.md).
void PrintTo(const InvalidCase &c, std::ostream *os) { *os << c.name; }

// Breakages shared by both calls: one field of one projection of one expert.
Breakage set_qtype(int32_t expert, CpuProjectionV2 CpuExpertV2::*proj, int32_t qtype) {
    return [=](Args &a, expertkit::ExpertSet &, std::mt19937_64 &) { (a.experts[size_t(expert)].*proj).qtype = qtype; };
}
template <typename Field, typename Value>
Breakage set_field(int32_t expert, CpuProjectionV2 CpuExpertV2::*proj, Field CpuProjectionV2::*field, Value v) {
    return [=](Args &a, expertkit::ExpertSet &, std::mt19937_64 &) { (a.experts[size_t(expert)].*proj).*field = Field(v); };
}
Breakage add_to_field(int32_t expert, CpuProjectionV2 CpuExpertV2::*proj, size_t CpuProjectionV2::*field, long delta) {
    return [=](Args &a, expertkit::ExpertSet &, std::mt19937_64 &) {
        size_t &f = (a.experts[size_t(expert)].*proj).*field;
        f = size_t(long(f) + delta);
    };
}
// Replaces a projection by a valid one of another shape: only the chaining rule is broken.
Breakage reshape(int32_t expert, CpuProjectionV2 CpuExpertV2::*proj, int32_t out, int32_t in) {
    return [=](Args &a, expertkit::ExpertSet &set, std::mt19937_64 &rng) {
        CpuProjectionV2 &p = a.experts[size_t(expert)].*proj;
        p = set.make_projection(p.qtype, out, in, p.scale, rng);
    };
}
Breakage set_route_weight(int32_t expert, float w) {
    return [=](Args &a, expertkit::ExpertSet &, std::mt19937_64 &) { a.experts[size_t(expert)].route_weight = w; };
}
template <typename T>
Breakage set_arg(T Args::*field, T v) {
    return [=](Args &a, expertkit::ExpertSet &, std::mt19937_64 &) { a.*field = v; };
}

constexpr auto kGate = &CpuExpertV2::gate;
constexpr auto kUp = &CpuExpertV2::up;
constexpr auto kDown = &CpuExpertV2::down;

// Errors in an expert's descriptors: the rows call (experts[0] only) and the token call (any).
std::vector<InvalidCase> expert_cases(int32_t e) {
    const std::string E = "E" + std::to_string(e);
    return {
        {E + "GateQtypeF16", set_qtype(e, kGate, 1), {MEMRA_STATUS_UNSUPPORTED_QTYPE, {"gate", "qtype", "1"}, e}},
        {E + "UpQtypeIQ4_NL", set_qtype(e, kUp, 20), {MEMRA_STATUS_UNSUPPORTED_QTYPE, {"up", "qtype", "20"}, e}},
        {E + "DownQtypeQ5_0", set_qtype(e, kDown, 6), {MEMRA_STATUS_UNSUPPORTED_QTYPE, {"down", "qtype", "6"}, e}},
        {E + "GateQtypeMinus1", set_qtype(e, kGate, -1), {MEMRA_STATUS_UNSUPPORTED_QTYPE, {"gate", "qtype", "-1"}, e}},
        {E + "DownQtype999", set_qtype(e, kDown, 999), {MEMRA_STATUS_UNSUPPORTED_QTYPE, {"down", "qtype", "999"}, e}},
        {E + "GateInFeaturesZero", set_field(e, kGate, &CpuProjectionV2::in_features, 0), {MEMRA_STATUS_INVALID_ARGUMENT, {"gate", "in_features", "0"}, e}},
        {E + "UpInFeaturesNegative", set_field(e, kUp, &CpuProjectionV2::in_features, -256), {MEMRA_STATUS_INVALID_ARGUMENT, {"up", "in_features", "-256"}, e}},
        {E + "DownOutFeaturesZero", set_field(e, kDown, &CpuProjectionV2::out_features, 0), {MEMRA_STATUS_INVALID_ARGUMENT, {"down", "out_features", "0"}, e}},
        {E + "GateOutFeaturesNegative", set_field(e, kGate, &CpuProjectionV2::out_features, -7), {MEMRA_STATUS_INVALID_ARGUMENT, {"gate", "out_features", "-7"}, e}},
        // 272 is a multiple of 16 but of none of the block sizes 32, 64, 256 in these experts.
        {E + "UpInFeaturesNotBlockMultiple", set_field(e, kUp, &CpuProjectionV2::in_features, 272), {MEMRA_STATUS_INVALID_ARGUMENT, {"up", "in_features", "272"}, e}},
        {E + "GateRowBytesPlusOne", add_to_field(e, kGate, &CpuProjectionV2::row_bytes, 1), {MEMRA_STATUS_INVALID_ARGUMENT, {"gate", "row_bytes"}, e}},
        {E + "DownRowBytesZero", set_field(e, kDown, &CpuProjectionV2::row_bytes, 0), {MEMRA_STATUS_INVALID_ARGUMENT, {"down", "row_bytes"}, e}},
        {E + "UpByteLenMinusOne", add_to_field(e, kUp, &CpuProjectionV2::byte_len, -1), {MEMRA_STATUS_INVALID_ARGUMENT, {"up", "byte_len"}, e}},
        {E + "DownByteLenDouble", [=](Args &a, expertkit::ExpertSet &, std::mt19937_64 &) { a.experts[size_t(e)].down.byte_len *= 2; }, {MEMRA_STATUS_INVALID_ARGUMENT, {"down", "byte_len"}, e}},
        {E + "GateNoWeightsNoFile", set_field(e, kGate, &CpuProjectionV2::weights, nullptr), {MEMRA_STATUS_INVALID_ARGUMENT, {"gate", "weights"}, e}},
        {E + "DownNoWeightsFdMinus5", [=](Args &a, expertkit::ExpertSet &, std::mt19937_64 &) { a.experts[size_t(e)].down.weights = nullptr; a.experts[size_t(e)].down.file_fd = -5; }, {MEMRA_STATUS_INVALID_ARGUMENT, {"down", "weights"}, e}},
        {E + "UpInDiffersFromGate", reshape(e, kUp, kFf, 2 * kEmbd), {MEMRA_STATUS_INVALID_ARGUMENT, {"up", "in_features"}, e}},
        {E + "UpOutDiffersFromGate", reshape(e, kUp, 2 * kFf, kEmbd), {MEMRA_STATUS_INVALID_ARGUMENT, {"up", "out_features"}, e}},
        {E + "DownInDiffersFromGateOut", reshape(e, kDown, kEmbd, 2 * kFf), {MEMRA_STATUS_INVALID_ARGUMENT, {"down", "in_features"}, e}},
        {E + "GateScaleNaN", set_field(e, kGate, &CpuProjectionV2::scale, kNaN), {MEMRA_STATUS_INVALID_ARGUMENT, {"gate", "scale", "nan"}, e}},
        {E + "UpScaleInf", set_field(e, kUp, &CpuProjectionV2::scale, kInf), {MEMRA_STATUS_INVALID_ARGUMENT, {"up", "scale", "inf"}, e}},
        {E + "DownScaleMinusInf", set_field(e, kDown, &CpuProjectionV2::scale, -kInf), {MEMRA_STATUS_INVALID_ARGUMENT, {"down", "scale", "-inf"}, e}},
    };
}

std::vector<InvalidCase> token_cases() {
    std::vector<InvalidCase> cases = {
        {"CountZero", set_arg(&Args::count, 0), {MEMRA_STATUS_INVALID_ARGUMENT, {"count", "0"}}},
        {"CountNegative", set_arg(&Args::count, -3), {MEMRA_STATUS_INVALID_ARGUMENT, {"count", "-3"}}},
        {"NullExperts", set_arg(&Args::null_experts, true), {MEMRA_STATUS_INVALID_ARGUMENT, {"experts"}}},
        {"NullInput", set_arg(&Args::null_input, true), {MEMRA_STATUS_INVALID_ARGUMENT, {"input"}}},
        {"NullOutput", set_arg(&Args::null_output, true), {MEMRA_STATUS_INVALID_ARGUMENT, {"output"}}},
        {"ThreadsZero", set_arg(&Args::threads, 0), {MEMRA_STATUS_INVALID_ARGUMENT, {"threads", "0"}}},
        {"ThreadsNegative", set_arg(&Args::threads, -4), {MEMRA_STATUS_INVALID_ARGUMENT, {"threads", "-4"}}},
        // The input length of every expert must agree: expert 2 takes 512 values instead of 256.
        {"E2InputLengthDiffers",
         [](Args &a, expertkit::ExpertSet &set, std::mt19937_64 &rng) {
             CpuExpertV2 &e = a.experts[2];
             e.gate = set.make_projection(e.gate.qtype, kFf, 2 * kEmbd, 1.0f, rng);
             e.up = set.make_projection(e.up.qtype, kFf, 2 * kEmbd, 1.0f, rng);
         },
         {MEMRA_STATUS_INVALID_ARGUMENT, {"in_features"}, 2}},
        // Every expert's down.out must agree: expert 1 writes 512 values instead of 256.
        {"E1OutputLengthDiffers", reshape(1, kDown, 2 * kEmbd, kFf), {MEMRA_STATUS_INVALID_ARGUMENT, {"down", "out_features"}, 1}},
        {"E1RouteWeightNaN", set_route_weight(1, kNaN), {MEMRA_STATUS_INVALID_ARGUMENT, {"route_weight", "nan"}, 1}},
        {"E2RouteWeightInf", set_route_weight(2, kInf), {MEMRA_STATUS_INVALID_ARGUMENT, {"route_weight", "inf"}, 2}},
        {"E0RouteWeightMinusInf", set_route_weight(0, -kInf), {MEMRA_STATUS_INVALID_ARGUMENT, {"route_weight", "-inf"}, 0}},
    };
    // The per-projection errors, in the first expert and in a later one (which must be named).
    for (int32_t e : {0, 2})
        for (InvalidCase &c : expert_cases(e)) cases.push_back(std::move(c));
    return cases;
}

std::vector<InvalidCase> rows_cases() {
    std::vector<InvalidCase> cases = {
        {"RowsZero", set_arg(&Args::rows, 0), {MEMRA_STATUS_INVALID_ARGUMENT, {"rows", "0"}}},
        {"RowsNegative", set_arg(&Args::rows, -1), {MEMRA_STATUS_INVALID_ARGUMENT, {"rows", "-1"}}},
        {"Rows65", set_arg(&Args::rows, 65), {MEMRA_STATUS_INVALID_ARGUMENT, {"rows", "65"}}},
        {"NullExpert", set_arg(&Args::null_experts, true), {MEMRA_STATUS_INVALID_ARGUMENT, {"expert"}}},
        {"NullInputs", set_arg(&Args::null_input, true), {MEMRA_STATUS_INVALID_ARGUMENT, {"inputs"}}},
        {"NullOutputs", set_arg(&Args::null_output, true), {MEMRA_STATUS_INVALID_ARGUMENT, {"outputs"}}},
        {"NullRouteWeights", set_arg(&Args::null_route_weights, true), {MEMRA_STATUS_INVALID_ARGUMENT, {"route_weights"}}},
        {"ThreadsZero", set_arg(&Args::threads, 0), {MEMRA_STATUS_INVALID_ARGUMENT, {"threads", "0"}}},
        {"ThreadsNegative", set_arg(&Args::threads, -2), {MEMRA_STATUS_INVALID_ARGUMENT, {"threads", "-2"}}},
    };
    // The rows call takes one expert, so the message need not name an index.
    for (InvalidCase &c : expert_cases(0)) {
        c.expected.expert = -1;
        cases.push_back(std::move(c));
    }
    return cases;
}

// Builds the valid arguments, breaks them, and hands both to the test body.
class Fixture {
public:
    Fixture() : rng_(42), set_(make_experts(rng_)), input_(expertkit::random_input(kEmbd * 65, rng_)),
                route_weights_(65, 0.5f) {
        args_.experts = set_.descriptors();
        valid_ = args_;
    }
    void apply(const Breakage &b) { b(args_, set_, rng_); }
    const float *input() const { return args_.null_input ? nullptr : input_.data(); }
    const float *valid_input() const { return input_.data(); }
    const float *route_weights() const { return args_.null_route_weights ? nullptr : route_weights_.data(); }
    const CpuExpertV2 *experts() const { return args_.null_experts ? nullptr : args_.experts.data(); }
    float *output(std::vector<float> &buf) const { return args_.null_output ? nullptr : buf.data(); }
    // An output buffer of n floats plus the guard zone, filled with a NaN bit pattern no
    // computation produces.
    static std::vector<float> sentinel(size_t n) {
        std::vector<float> buf(n + kGuard);
        const uint32_t pattern = 0x7FC0DEADu;
        for (float &f : buf) std::memcpy(&f, &pattern, sizeof f);
        return buf;
    }
    std::vector<std::pair<const void *, size_t>> watched(const std::vector<float> &out) const {
        return {{out.data(), out.size() * sizeof(float)},
                {args_.experts.data(), args_.experts.size() * sizeof(CpuExpertV2)},
                {input_.data(), input_.size() * sizeof(float)}};
    }
    Args args_, valid_;

private:
    std::mt19937_64 rng_;
    expertkit::ExpertSet set_;
    std::vector<float> input_, route_weights_;
};

void expect_finite(const std::vector<float> &v, size_t n) {
    for (size_t i = 0; i < n; ++i) ASSERT_TRUE(std::isfinite(v[i])) << "output " << i;
}

class InvalidToken : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(InvalidToken, IsRejectedAndLibraryStaysUsable) {
    Fixture f;
    f.apply(GetParam().breakage);
    std::vector<float> out = Fixture::sentinel(kEmbd);
    check_rejection(
        [&](char *error, size_t len) {
            return memra_cpu_moe_token_v2(f.experts(), f.args_.count, f.input(), f.output(out),
                                          f.args_.threads, error, len);
        },
        GetParam().expected, f.watched(out));

    std::vector<float> good(kEmbd);
    const CallResult r = call_token(f.valid_.experts.data(), 3, f.valid_input(), good.data(), 2);
    ASSERT_EQ(r.status, MEMRA_STATUS_OK) << "the next valid call failed: " << r.message;
    expect_finite(good, kEmbd);
}

INSTANTIATE_TEST_SUITE_P(Validation, InvalidToken, ::testing::ValuesIn(token_cases()), case_param_name<InvalidCase>);

class InvalidRows : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(InvalidRows, IsRejectedAndLibraryStaysUsable) {
    Fixture f;
    f.apply(GetParam().breakage);
    std::vector<float> out = Fixture::sentinel(size_t(kEmbd) * 65);
    check_rejection(
        [&](char *error, size_t len) {
            return memra_cpu_expert_rows_v2(f.experts(), f.input(), f.args_.rows, f.route_weights(),
                                            f.output(out), f.args_.threads, error, len);
        },
        GetParam().expected, f.watched(out));

    Fixture valid;
    std::vector<float> good(size_t(kEmbd) * 3);
    const CallResult r = call_rows(valid.experts(), valid.input(), 3, valid.route_weights(), good.data(), 2);
    ASSERT_EQ(r.status, MEMRA_STATUS_OK) << "the next valid call failed: " << r.message;
    expect_finite(good, good.size());
}

INSTANTIATE_TEST_SUITE_P(Validation, InvalidRows, ::testing::ValuesIn(rows_cases()), case_param_name<InvalidCase>);

// The edges of the valid ranges are accepted: one expert, 1 and 64 rows, one thread, a thread
// count far above anything useful (clamped, not refused), zero and negative scales.
TEST(Validation, EdgesOfValidRangesAreAccepted) {
    Fixture f;
    std::vector<float> out(size_t(kEmbd) * 64);
    EXPECT_EQ(call_token(f.experts(), 1, f.input(), out.data(), 1).status, MEMRA_STATUS_OK);
    EXPECT_EQ(call_token(f.experts(), 3, f.input(), out.data(), 1000).status, MEMRA_STATUS_OK);
    EXPECT_EQ(call_rows(f.experts(), f.input(), 1, f.route_weights(), out.data(), 1).status, MEMRA_STATUS_OK);
    EXPECT_EQ(call_rows(f.experts(), f.input(), 64, f.route_weights(), out.data(), 1000).status, MEMRA_STATUS_OK);
    std::vector<CpuExpertV2> e = f.args_.experts;
    e[0].gate.scale = 0.0f;
    e[1].down.scale = -2.0f;
    e[2].route_weight = 0.0f;
    EXPECT_EQ(call_token(e.data(), 3, f.input(), out.data(), 2).status, MEMRA_STATUS_OK);
    expect_finite(out, kEmbd);
}

}  // namespace
}  // namespace memra::tests
