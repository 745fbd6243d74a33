// Calls into the library under test (linked directly) with an error buffer, returning the status
// and the message together, and running the problems of testkit/problems.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memra/cpu_experts.h"
#include "problems.h"

namespace memra::tests {

struct CallResult {
    int32_t status = -1;
    std::string message;  // the error text, empty on success
};

CallResult call_token(const CpuExpertV2 *experts, int32_t count, const float *input,
                      float *output, int32_t threads);
CallResult call_rows(const CpuExpertV2 *expert, const float *inputs, int32_t rows,
                     const float *route_weights, float *outputs, int32_t threads);

// The output of a successful call (a failed one is reported as a test failure, and its output
// is returned anyway, NaN-filled where the library did not write).
std::vector<float> run_token(const testkit::TokenProblem &p, int32_t threads);
std::vector<float> run_rows(const testkit::RowsProblem &p, int32_t threads);

// Bit-identical (memcmp): the determinism the contract promises, +-0 and NaN payloads included.
bool same_bits(const std::vector<float> &a, const std::vector<float> &b);

// The describe line of the library in this process.
std::string describe_line();

// One figure of the describe line's prefetch account ("queued", "dropped", "skipped", "failed").
uint64_t prefetch_count(const std::string &word);

}  // namespace memra::tests
