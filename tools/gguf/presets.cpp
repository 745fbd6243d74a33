#include "presets.h"

#include "cli.h"

namespace memra::gguf_tool {

const std::vector<ModelShape> &presets() {
    static const std::vector<ModelShape> kPresets = {
        // Small enough to write in well under a second: the tests' and the examples' model.
        {"tiny", "qwen3moe", 512, 256, 8, 2, 2},
        // Qwen3-30B-A3B (config.json: hidden_size 2048, moe_intermediate_size 768, num_experts 128,
        // num_experts_per_tok 8, num_hidden_layers 48). All 48 layers at q4_K are ~15 GiB.
        {"qwen3-30b-a3b", "qwen3moe", 2048, 768, 128, 8, 48},
        // Mixtral-8x7B (hidden_size 4096, intermediate_size 14336, 8 local experts, 2 per token,
        // 32 layers); llama.cpp files it under the "llama" architecture.
        {"mixtral-8x7b", "llama", 4096, 14336, 8, 2, 32},
    };
    return kPresets;
}

ModelShape preset(const std::string &name) {
    std::string names;
    for (const ModelShape &p : presets()) {
        if (p.preset == name) return p;
        names += (names.empty() ? "" : ", ") + p.preset;
    }
    throw UsageError("unknown --arch '" + name + "' (presets: " + names + ")");
}

}  // namespace memra::gguf_tool
