// One format through the core's full orchestration: a rows call (memra::expert_rows) for each
// row count and a token call over several experts (memra::moe_token), computed once with the
// scalar backend forced, then with any other backend forced, in this one process.
//
// The results must be bit-identical, not merely close. Why that holds (so no tolerance is
// needed or allowed): every kernel's per-row result equals the scalar kernel's bit for bit for
// the same quantized activations (KernelCase checks exactly that), every plugin's activation
// quantizer produces the canonical bytes, and everything between the kernels (tiling rows into
// tasks, silu * up, quantizing h for down, the scales and the route-weighted sum in expert
// order) is the same baseline-compiled core code whichever backend is forced. Tiles are cut from
// row_bytes alone and threads split rows, never a row's reduction, so not even the thread count
// changes a bit. A difference here therefore means a kernel or quantizer input the kernel-level
// checks did not reach, or a core path that depends on the backend: both are bugs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dispatch/backend_registry.h"
#include "expert_set.h"

namespace memra::conformance {

struct CallShape {
    int32_t n_embd = 0, n_ff = 0;
    std::vector<int32_t> rows;  // a rows call for each (1..64)
    int32_t experts = 0;        // the token call's expert count (0: no token call)
    // The OpenMP team: 2 where there are many tiles (the realistic experts), so kernels also
    // run concurrently as in production; 1 for the small experts (a single tile each), where
    // idle spinning workers between hundreds of short calls would cost more than the checks.
    int32_t threads = 1;
    std::string name() const;   // "2048x768_rows1,5_token4"
};

class CallCase {
public:
    // Builds the experts and inputs from `seed` and computes the scalar registry's results.
    // Throws std::runtime_error when the reference itself fails.
    CallCase(const BackendRegistry &scalar, int32_t qtype, const CallShape &shape, uint64_t seed);

    // "" when every call agrees bit for bit; else the first disagreement.
    std::string compare(const BackendRegistry &subject) const;

private:
    // The outputs of every call in order: the rows calls, then the token call.
    std::vector<std::vector<float>> run(const BackendRegistry &registry) const;

    CallShape shape_;
    expertkit::ExpertSet rows_expert_, token_experts_;
    std::vector<float> inputs_;         // max(rows) x n_embd
    std::vector<float> route_weights_;  // max(rows)
    std::vector<std::vector<float>> reference_;
};

}  // namespace memra::conformance
