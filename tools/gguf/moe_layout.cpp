#include "moe_layout.h"

#include <map>
#include <regex>
#include <stdexcept>

#include "memra/qtypes.h"

namespace memra::gguf {
namespace {

std::string shape_text(const TensorInfo &t) {
    std::string s = "[";
    for (size_t k = 0; k < t.dims.size(); ++k) s += (k ? ", " : "") + std::to_string(t.dims[k]);
    return s + "]";
}

// Fills n_* from the tensors and says what, if anything, keeps the layer from being evaluated.
void check_layer(MoeLayer &l) {
    if (!l.gate || !l.up || !l.down) {
        l.problem = std::string("missing") + (l.gate ? "" : " gate") + (l.up ? "" : " up") + (l.down ? "" : " down");
        return;
    }
    for (const TensorInfo *t : {l.gate, l.up, l.down})
        if (t->dims.size() != 3) {
            l.problem = t->name + " is " + std::to_string(t->dims.size()) + "-D, expected 3-D";
            return;
        }
    l.n_embd = l.gate->dims[0];
    l.n_ff = l.gate->dims[1];
    l.n_expert = l.gate->dims[2];
    if (l.up->dims != l.gate->dims)
        l.problem = "up " + shape_text(*l.up) + " differs from gate " + shape_text(*l.gate);
    else if (l.down->dims != std::vector<uint64_t>{l.n_ff, l.n_embd, l.n_expert})
        l.problem = "down " + shape_text(*l.down) + " does not chain with gate " + shape_text(*l.gate);
    else if (l.n_embd > INT32_MAX || l.n_ff > INT32_MAX)
        l.problem = "dimensions exceed the ABI's int32 features";
    else
        for (const TensorInfo *t : {l.gate, l.up, l.down})
            if (!library_supports(t->type)) {
                l.problem = t->name + " has type " + tensor_type_name(t->type) + ", which the library does not evaluate";
                return;
            }
}

}  // namespace

bool library_supports(uint32_t type) { return type <= INT32_MAX && memra_qtype_find(int32_t(type)) != nullptr; }

std::string expert_tensor_name(int layer, const std::string &proj) {
    return "blk." + std::to_string(layer) + ".ffn_" + proj + "_exps.weight";
}

std::vector<MoeLayer> find_moe_layers(const Model &m) {
    static const std::regex kName(R"(blk\.(\d{1,6})\.ffn_(gate|up|down)_exps\.weight)");
    std::map<int, MoeLayer> layers;
    for (const TensorInfo &t : m.tensors) {
        std::smatch match;
        if (!std::regex_match(t.name, match, kName)) continue;
        const int n = std::stoi(match[1].str());
        MoeLayer &l = layers[n];
        l.layer = n;
        const std::string proj = match[2].str();
        (proj == "gate" ? l.gate : proj == "up" ? l.up : l.down) = &t;
    }
    std::vector<MoeLayer> out;
    for (auto &[n, l] : layers) {
        check_layer(l);
        out.push_back(l);
    }
    return out;
}

ExpertSlice expert_slice(const TensorInfo &t, uint64_t e) {
    const auto info = tensor_type_info(t.type);
    if (!info || t.dims.size() != 3 || e >= t.dims[2])
        throw std::invalid_argument(t.name + ": no expert " + std::to_string(e));
    ExpertSlice s;
    s.qtype = t.type;
    s.in_features = t.dims[0];
    s.out_features = t.dims[1];
    s.row_bytes = t.dims[0] / info->block_elems * info->block_bytes;
    s.bytes = s.row_bytes * s.out_features;
    s.offset = t.offset + e * s.bytes;
    return s;
}

}  // namespace memra::gguf
