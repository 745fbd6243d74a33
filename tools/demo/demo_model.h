// The demo's built-in model: small MoE layers whose projections use each of the library's formats
// once (demo_layers() of them, 4 for 12 formats: 3 projections a layer), and the experts (with
// route weights) each layer's tokens use.
#pragma once

#include <cstdint>
#include <vector>

#include "synth_model.h"

namespace memra::demo {

// n_embd 512, n_ff 256 (whole blocks of every format), 4 experts per layer, 2 used per token:
// 6 MiB (the f32 and bf16 projections are most of it), written in a second or two.
gguf_tool::SynthSpec demo_model(uint64_t seed, int threads);

// Layers of the model: enough for every format of the list (memra/qtypes.h) once.
uint32_t demo_layers();

struct Selection {
    std::vector<uint32_t> experts;
    std::vector<float> route_weights;
};

// Layer l's experts: two of the layer's n_expert, different per layer, with unequal weights, as a
// router's top-2 would give.
Selection demo_selection(int layer, uint64_t n_expert);

}  // namespace memra::demo
