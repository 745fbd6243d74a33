#include "problems.h"

#include <random>

#include "synthetic_weights.h"

namespace memra::testkit {

TokenProblem make_token_problem(const std::vector<expertkit::ExpertSpec> &specs,
                                int32_t n_embd, int32_t n_ff, uint64_t seed) {
    std::mt19937_64 rng(seed);
    TokenProblem p{expertkit::ExpertSet(n_embd, n_ff), {}};
    for (const expertkit::ExpertSpec &spec : specs) p.experts.add(spec, rng);
    p.input = expertkit::random_input(n_embd, rng);
    return p;
}

float rows_route_weight(int32_t r) {
    static const float cycle[] = {0.8f, -0.5f, 0.0f, 1.25f, 0.3f, -1.1f, 0.05f};
    return cycle[r % 7];
}

RowsProblem make_rows_problem(const expertkit::ExpertSpec &spec, int32_t rows, int32_t n_embd,
                              int32_t n_ff, uint64_t seed) {
    std::mt19937_64 rng(seed);
    RowsProblem p{expertkit::ExpertSet(n_embd, n_ff), rows, {}, {}};
    p.experts.add(spec, rng);
    p.inputs = expertkit::random_input(rows * n_embd, rng);
    for (int32_t r = 0; r < rows; ++r) p.route_weights.push_back(rows_route_weight(r));
    return p;
}

}  // namespace memra::testkit
