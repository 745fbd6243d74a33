// MoE model shapes for `memra-gguf synth --arch NAME`: the dimensions of the expert tensors and
// the metadata a loader needs to find them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace memra::gguf_tool {

struct ModelShape {
    std::string preset;        // the --arch name
    std::string architecture;  // general.architecture, the prefix of the model's keys
    uint32_t n_embd = 0, n_ff = 0, n_expert = 0, n_expert_used = 0, layers = 0;
};

// tiny (the default), qwen3-30b-a3b, mixtral-8x7b.
const std::vector<ModelShape> &presets();

// The preset of that name; throws UsageError naming the choices.
ModelShape preset(const std::string &name);

}  // namespace memra::gguf_tool
