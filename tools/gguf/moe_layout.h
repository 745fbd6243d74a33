// Where a GGUF file keeps its MoE experts: llama.cpp's merged expert tensors
// blk.N.ffn_{gate,up,down}_exps.weight, each 3-D in ggml order (ne[0] = the row length):
//   gate, up: [n_embd, n_ff, n_expert]   (n_ff rows of n_embd values per expert)
//   down:     [n_ff, n_embd, n_expert]   (n_embd rows of n_ff values per expert)
// Expert e's matrix is the contiguous slice e of the tensor (ne[2] is the outermost dimension).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gguf_model.h"

namespace memra::gguf {

struct MoeLayer {
    int layer = 0;
    const TensorInfo *gate = nullptr, *up = nullptr, *down = nullptr;
    uint64_t n_expert = 0, n_embd = 0, n_ff = 0;
    std::string problem;  // empty when the three tensors are present and their shapes chain

    bool usable() const { return problem.empty(); }
};

// One expert's matrix inside a merged tensor.
struct ExpertSlice {
    uint32_t qtype = 0;
    uint64_t in_features = 0, out_features = 0;
    uint64_t row_bytes = 0, bytes = 0;
    uint64_t offset = 0;  // relative to the data section, like TensorInfo::offset
};

// Every layer with at least one blk.N.ffn_*_exps.weight tensor, in layer order.
std::vector<MoeLayer> find_moe_layers(const Model &m);

// Expert e of a 3-D expert tensor whose type the reader knows (e < dims[2]).
ExpertSlice expert_slice(const TensorInfo &t, uint64_t e);

// The expert tensor's name, as llama.cpp spells it: proj is "gate", "up" or "down".
std::string expert_tensor_name(int layer, const std::string &proj);

// Whether libmemra-cpu-experts evaluates this ggml type (a format of its list, memra/qtypes.h).
bool library_supports(uint32_t type);

}  // namespace memra::gguf
