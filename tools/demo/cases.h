// The demo's job: every MoE layer of the model, from each weight source, evaluated through the
// loaded library token after token (memra_cpu_moe_token_v2) and in batches of rows
// (memra_cpu_expert_rows_v2, one call per expert). The parent runs it on the library's own choice of backend,
// its scalar child (MEMRA_CPU_EXPERT_BACKEND=scalar) runs the very same cases.
#pragma once

#include <string>
#include <vector>

#include "abi_loader.h"
#include "demo_model.h"
#include "gguf_file.h"
#include "layer_experts.h"
#include "moe_layout.h"
#include "token_run.h"

namespace memra::demo {

struct Case {
    gguf::MoeLayer layer;
    gguf_tool::WeightSource source;
    int rows = 0;               // 0: the token call; else the rows call in batches of this many
    Selection selection;
    std::vector<float> inputs;  // tokens x n_embd
    gguf_tool::Measurement result;
    std::vector<double> timed_s;  // the call timed on warm state, kTimedCalls times (timing.h); parent only
};

// Layer by layer: the token call from memory then file, then the rows call likewise. Throws std::runtime_error when the file has no MoE layer or
// an unusable one; a failing call is recorded in its Case's result.failure.
std::vector<Case> run_cases(const memra_loaded_abi &abi, const gguf::File &file, int tokens, int rows, uint64_t seed,
                            int threads);

const char *source_name(gguf_tool::WeightSource s);

// Every case's outputs, one after the other (what the scalar child hands back).
std::vector<float> all_outputs(const std::vector<Case> &cases);

}  // namespace memra::demo
