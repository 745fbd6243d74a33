// Writing a synthetic MoE model: the part of `memra-gguf synth` that memra-demo reuses. A GGUF v3
// file of the expert tensors blk.N.ffn_{gate,up,down}_exps.weight (and the metadata that locates
// them), seeded synthetic weights quantized by memra_quantize, each layer in its own formats.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "presets.h"

namespace memra::gguf_tool {

// The ggml types of one layer's gate, up and down projections.
using LayerFormats = std::array<uint32_t, 3>;

struct SynthSpec {
    ModelShape shape;
    std::vector<LayerFormats> formats;  // one per layer (shape.layers entries)
    uint64_t seed = 1;
    uint32_t alignment = 32;
    int threads = 1;
    int progress = -1;  // Progress's enabled: -1 on a terminal, 0 never, 1 always
};

// The format named like ggml ("q4_K", case-insensitive) if the library evaluates it; throws
// UsageError("--OPTION 'NAME' is not one of the library's formats (...)") otherwise.
uint32_t parse_qtype(const std::string &option, const std::string &name);

// Throws UsageError when a projection's rows are not whole blocks of its format, or when the
// spec has not one LayerFormats per layer.
void check_spec(const SynthSpec &spec);

// Writes the file (check_spec first). Expert e of tensor t depends only on the seed, t and e,
// so the bytes are the same for any thread count.
void write_model(const std::string &path, const SynthSpec &spec);

// Bytes of all expert weights the file holds.
uint64_t weight_bytes(const SynthSpec &spec);

}  // namespace memra::gguf_tool
