// Evaluating a layer's experts through the loaded library as the engine does: token after token
// (memra_cpu_moe_token_v2, decoding), or M tokens at once per expert (memra_cpu_expert_rows_v2,
// prefill). The measuring loops of `memra-gguf run`, which memra-demo reuses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "abi_loader.h"
#include "layer_experts.h"

namespace memra::gguf_tool {

// tokens x n values, N(0, 1) from seed: the inputs of run and of the demo (and of their scalar
// children, which must see the very same values).
std::vector<float> make_inputs(uint64_t seed, int tokens, uint64_t n);

struct Measurement {
    std::vector<double> latency_s;            // per token, or per batch of rows
    std::vector<float> outputs;               // tokens x n_embd
    uint64_t cache[4] = {}, profile[4] = {};  // deltas over the run (cache[3], resident bytes, a level)
    std::string failure;                      // the library's error when a call failed
};

// One memra_cpu_moe_token_v2 call per token of inputs (tokens x n_embd), threads each; stops at
// the first failing call. progress: Progress's enabled (-1 on a terminal, 0 never, 1 always).
Measurement measure_tokens(const memra_loaded_abi &abi, const LayerExperts &experts, const std::vector<float> &inputs,
                           uint64_t n_embd, int threads, int progress);

// The same sum of the experts for batches of `rows` tokens (the last batch holds what is left):
// per batch, one memra_cpu_expert_rows_v2 call per expert with its route weight on every row, the
// experts' outputs summed in expert order in float, as an engine scattering prefill results does.
// latency_s holds one entry per batch (all its experts' calls).
Measurement measure_rows(const memra_loaded_abi &abi, const LayerExperts &experts, const std::vector<float> &inputs,
                         uint64_t n_embd, int rows, int threads, int progress);

// Nearest-rank percentile (p in [0, 1]) of a non-empty sample.
double percentile(std::vector<double> v, double p);

// The library's describe line (its project extension), "" when it has none.
std::string describe_library(const memra_loaded_abi &abi);

}  // namespace memra::gguf_tool
