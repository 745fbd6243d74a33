#include "cases.h"

#include <stdexcept>

namespace memra::demo {

const char *source_name(gguf_tool::WeightSource s) { return s == gguf_tool::WeightSource::File ? "file" : "memory"; }

std::vector<Case> run_cases(const memra_loaded_abi &abi, const gguf::File &file, int tokens, int rows, uint64_t seed,
                            int threads) {
    const std::vector<gguf::MoeLayer> layers = gguf::find_moe_layers(file.model());
    if (layers.empty()) throw std::runtime_error(file.path() + ": no MoE expert tensors");
    std::vector<Case> cases;
    for (const gguf::MoeLayer &layer : layers) {
        if (!layer.usable()) throw std::runtime_error(file.path() + ": layer " + std::to_string(layer.layer) + ": " + layer.problem);
        // Each layer its own inputs, the same for both sources (and for the scalar child).
        const std::vector<float> inputs = gguf_tool::make_inputs(seed + uint64_t(layer.layer), tokens, layer.n_embd);
        for (int batch : {0, rows})
            for (gguf_tool::WeightSource source : {gguf_tool::WeightSource::Memory, gguf_tool::WeightSource::File}) {
                Case c{layer, source, batch, demo_selection(layer.layer, layer.n_expert), inputs, {}, {}};
                const gguf_tool::LayerExperts experts(file, layer, c.selection.experts, c.selection.route_weights, source);
                c.result = batch ? gguf_tool::measure_rows(abi, experts, inputs, layer.n_embd, batch, threads, 0)
                                 : gguf_tool::measure_tokens(abi, experts, inputs, layer.n_embd, threads, 0);
                cases.push_back(std::move(c));
            }
    }
    return cases;
}

std::vector<float> all_outputs(const std::vector<Case> &cases) {
    std::vector<float> out;
    for (const Case &c : cases) out.insert(out.end(), c.result.outputs.begin(), c.result.outputs.end());
    return out;
}

}  // namespace memra::demo
