// Ready-made inputs for a token call and a rows call on synthetic experts, seeded so that every
// suite and tool that names the same case computes on the same bytes.
#pragma once

#include <cstdint>
#include <vector>

#include "expert_set.h"

namespace memra::testkit {

struct TokenProblem {
    expertkit::ExpertSet experts;
    std::vector<float> input;  // n_embd values
};

TokenProblem make_token_problem(const std::vector<expertkit::ExpertSpec> &specs,
                                int32_t n_embd, int32_t n_ff, uint64_t seed);

struct RowsProblem {
    expertkit::ExpertSet experts;      // one expert, experts[0]
    int32_t rows = 0;
    std::vector<float> inputs;         // rows x n_embd
    std::vector<float> route_weights;  // rows; positive, negative and zero ones
};

RowsProblem make_rows_problem(const expertkit::ExpertSpec &spec, int32_t rows, int32_t n_embd,
                              int32_t n_ff, uint64_t seed);

// The route weights make_rows_problem uses for row r: a cycle through positive, negative and
// zero values (a zero-weighted row must come out as zeros).
float rows_route_weight(int32_t r);

}  // namespace memra::testkit
