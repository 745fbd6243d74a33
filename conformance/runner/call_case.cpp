#include "call_case.h"

#include <algorithm>
#include <random>
#include <stdexcept>

#include "activations.h"
#include "kernel_case.h"
#include "compute/moe.h"
#include "problems.h"
#include "compute/validate.h"

namespace memra::conformance {
namespace {

// Macro scales other than 1 (the NVFP4 per-tensor scale, for instance), so that a backend-
// dependent slip in applying them would show.
expertkit::ExpertSpec spec_for(int32_t qtype, float route_weight) {
    expertkit::ExpertSpec spec = expertkit::uniform_spec(qtype, route_weight);
    spec.gate_scale = 1.25f;
    spec.up_scale = 0.75f;
    spec.down_scale = 1.5f;
    return spec;
}

std::string join(const std::vector<int32_t> &v) {
    std::string s;
    for (int32_t x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
    return s;
}

}  // namespace

std::string CallShape::name() const {
    std::string s = std::to_string(n_embd) + "x" + std::to_string(n_ff);
    if (!rows.empty()) s += "_rows" + join(rows);
    if (experts > 0) s += "_token" + std::to_string(experts);
    return s;
}

CallCase::CallCase(const BackendRegistry &scalar, int32_t qtype, const CallShape &shape, uint64_t seed)
    : shape_(shape),
      rows_expert_(shape.n_embd, shape.n_ff),
      token_experts_(shape.n_embd, shape.n_ff) {
    std::mt19937_64 rng(seed);
    rows_expert_.add(spec_for(qtype, 1.0f), rng);
    for (int32_t i = 0; i < shape.experts; ++i)
        token_experts_.add(spec_for(qtype, testkit::rows_route_weight(i + 1)), rng);
    const int32_t max_rows = shape.rows.empty() ? 1 : *std::max_element(shape.rows.begin(), shape.rows.end());
    inputs_ = activation_rows(max_rows, shape.n_embd, rng);
    for (int32_t r = 0; r < max_rows; ++r) route_weights_.push_back(testkit::rows_route_weight(r));
    reference_ = run(scalar);
}

std::vector<std::vector<float>> CallCase::run(const BackendRegistry &registry) const {
    std::vector<std::vector<float>> results;
    for (int32_t rows : shape_.rows) {
        std::vector<float> out(size_t(rows) * size_t(shape_.n_embd));
        validate_rows_call(&rows_expert_[0], inputs_.data(), rows, route_weights_.data(), out.data(), shape_.threads);
        expert_rows(registry, rows_expert_[0], inputs_.data(), rows, route_weights_.data(), out.data(), shape_.threads);
        results.push_back(std::move(out));
    }
    if (shape_.experts > 0) {
        // The token's input is the first row of the rows calls' inputs (random, N(0, 1)).
        std::vector<float> out(size_t(shape_.n_embd));
        validate_token_call(token_experts_.data(), token_experts_.count(), inputs_.data(), out.data(), shape_.threads);
        moe_token(registry, token_experts_.data(), token_experts_.count(), inputs_.data(), out.data(), shape_.threads);
        results.push_back(std::move(out));
    }
    return results;
}

std::string CallCase::compare(const BackendRegistry &subject) const {
    std::vector<std::vector<float>> got;
    try {
        got = run(subject);
    } catch (const std::exception &e) {
        return std::string("the call failed: ") + e.what();
    }
    for (size_t i = 0; i < got.size(); ++i) {
        const std::string diff = first_difference(got[i].data(), reference_[i].data(), got[i].size());
        if (diff.empty()) continue;
        const std::string call = i < shape_.rows.size()
                                     ? "expert_rows rows=" + std::to_string(shape_.rows[i])
                                     : "moe_token of " + std::to_string(shape_.experts) + " experts";
        return call + ", output " + diff;
    }
    return "";
}

}  // namespace memra::conformance
