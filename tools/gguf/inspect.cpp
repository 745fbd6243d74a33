// memra-gguf inspect FILE: what a GGUF file holds (header, metadata, tensors), which MoE layers
// it has, and whether the library can evaluate each of their formats.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "cli.h"
#include "gguf_file.h"
#include "json.h"
#include "memra/qtypes.h"
#include "moe_layout.h"

namespace memra::gguf_tool {
namespace {

using gguf::File;
using gguf::Model;
using gguf::TensorInfo;
using gguf::ValueType;

const Command kInspect{
    "inspect", "FILE [--json]",
    "Show a GGUF file's header, metadata, tensors and MoE expert layers, and which formats\n"
    "libmemra-cpu-experts evaluates. A malformed file is an error (exit 1) naming the byte and field.",
    "  memra-gguf inspect model.gguf\n"
    "  memra-gguf inspect model.gguf --json | jq '.moe_layers[0]'\n"};

// Each tensor type in the file: how many tensors and bytes use it, and whether the library
// evaluates it.
struct FormatUse {
    uint32_t type;
    uint64_t tensors = 0, bytes = 0;
};
std::vector<FormatUse> formats_used(const Model &m) {
    std::vector<FormatUse> out;
    for (const TensorInfo &t : m.tensors) {
        auto it = std::find_if(out.begin(), out.end(), [&](const FormatUse &f) { return f.type == t.type; });
        if (it == out.end()) it = out.insert(out.end(), FormatUse{t.type});
        ++it->tensors;
        it->bytes += t.bytes.value_or(0);
    }
    return out;
}

std::string shape_text(const TensorInfo &t) {
    std::string s;
    for (size_t k = 0; k < t.dims.size(); ++k) s += (k ? " x " : "") + std::to_string(t.dims[k]);
    return s;
}

void print_table(const File &f) {
    const Model &m = f.model();
    std::printf("file        %s (%llu bytes)\n", f.path().c_str(), (unsigned long long)m.file_size);
    std::printf("header      GGUF v%u, %zu tensors, %zu kvs, alignment %llu, data section at byte %llu\n\n",
                m.version, m.tensors.size(), m.kvs.size(), (unsigned long long)m.alignment,
                (unsigned long long)m.data_offset);

    std::printf("%-44s %-8s %s\n", "key", "type", "value");
    for (const gguf::KeyValue &kv : m.kvs)
        std::printf("%-44s %-8s %s\n", kv.key.c_str(), gguf::value_type_name(uint32_t(kv.value.type)).c_str(),
                    kv.value.summary().c_str());

    std::printf("\n%-36s %-8s %-22s %14s %14s  %s\n", "tensor", "type", "shape (ne0 first)", "offset", "bytes", "library");
    for (const TensorInfo &t : m.tensors)
        std::printf("%-36s %-8s %-22s %14llu %14s  %s\n", t.name.c_str(), gguf::tensor_type_name(t.type).c_str(),
                    shape_text(t).c_str(), (unsigned long long)t.offset,
                    t.bytes ? std::to_string(*t.bytes).c_str() : "?",
                    gguf::library_supports(t.type) ? "yes" : "no");

    std::printf("\n%-8s %8s %14s  %s\n", "format", "tensors", "bytes", "library");
    for (const FormatUse &f : formats_used(m))
        std::printf("%-8s %8llu %14llu  %s\n", gguf::tensor_type_name(f.type).c_str(), (unsigned long long)f.tensors,
                    (unsigned long long)f.bytes, gguf::library_supports(f.type) ? "yes" : "no");

    const std::vector<gguf::MoeLayer> layers = gguf::find_moe_layers(m);
    std::printf("\nMoE layers: %zu\n", layers.size());
    if (layers.empty()) return;
    std::printf("%-6s %8s %8s %8s  %-8s %-8s %-8s  %s\n", "layer", "experts", "n_embd", "n_ff", "gate", "up", "down", "library");
    auto type_of = [](const TensorInfo *t) { return t ? gguf::tensor_type_name(t->type) : std::string("-"); };
    for (const gguf::MoeLayer &l : layers)
        std::printf("%-6d %8llu %8llu %8llu  %-8s %-8s %-8s  %s\n", l.layer, (unsigned long long)l.n_expert,
                    (unsigned long long)l.n_embd, (unsigned long long)l.n_ff, type_of(l.gate).c_str(),
                    type_of(l.up).c_str(), type_of(l.down).c_str(), l.usable() ? "yes" : ("no: " + l.problem).c_str());
}

tools::Json json_value(const gguf::Value &v) {
    switch (v.type) {
    case ValueType::STRING: return v.s;
    case ValueType::BOOL: return v.u != 0;
    case ValueType::FLOAT32: case ValueType::FLOAT64: return v.f;
    case ValueType::INT8: case ValueType::INT16: case ValueType::INT32: case ValueType::INT64: return v.i;
    case ValueType::ARRAY: {
        tools::Json head = tools::Json::array();
        for (const gguf::Value &e : v.head) head.push_back(json_value(e));
        return {{"element_type", gguf::value_type_name(uint32_t(v.elem_type))}, {"count", v.count}, {"head", head}};
    }
    default: return v.u;
    }
}

void print_json(const File &f) {
    using tools::Json;
    const Model &m = f.model();
    Json j{{"file", f.path()},
           {"file_size", m.file_size},
           {"version", m.version},
           {"tensor_count", m.tensors.size()},
           {"kv_count", m.kvs.size()},
           {"alignment", m.alignment},
           {"data_offset", m.data_offset}};
    Json &kvs = j["kvs"] = Json::array();
    for (const gguf::KeyValue &kv : m.kvs)
        kvs.push_back({{"key", kv.key}, {"type", gguf::value_type_name(uint32_t(kv.value.type))}, {"value", json_value(kv.value)}});
    Json &tensors = j["tensors"] = Json::array();
    for (const TensorInfo &t : m.tensors)
        tensors.push_back({{"name", t.name},
                           {"type", gguf::tensor_type_name(t.type)},
                           {"type_id", t.type},
                           {"shape", t.dims},
                           {"offset", t.offset},
                           {"bytes", t.bytes ? Json(*t.bytes) : Json("unknown")},
                           {"supported", gguf::library_supports(t.type)}});
    Json &formats = j["formats"] = Json::array();
    for (const FormatUse &u : formats_used(m))
        formats.push_back({{"type", gguf::tensor_type_name(u.type)},
                           {"tensors", u.tensors},
                           {"bytes", u.bytes},
                           {"supported", gguf::library_supports(u.type)}});
    Json &layers = j["moe_layers"] = Json::array();
    for (const gguf::MoeLayer &l : gguf::find_moe_layers(m)) {
        Json layer{{"layer", l.layer}, {"n_expert", l.n_expert}, {"n_embd", l.n_embd}, {"n_ff", l.n_ff}};
        for (auto [proj, t] : {std::pair{"gate", l.gate}, {"up", l.up}, {"down", l.down}})
            layer[proj] = t ? gguf::tensor_type_name(t->type) : std::string();
        layer["supported"] = l.usable();
        layer["problem"] = l.problem;
        layers.push_back(std::move(layer));
    }
    Json &names = j["library_formats"] = Json::array();
    for (const memra_qtype_info &q : memra_qtype_table) names.push_back(q.name);
    std::cout << tools::dump_json(j) << "\n";
}

}  // namespace

int inspect_main(int argc, char **argv) {
    std::string path;
    po::options_description opts("options");
    opts.add_options()
        ("file", po::value(&path)->required(), "the GGUF file (positional)")
        ("json", "print one JSON object instead of tables");
    po::positional_options_description positional;
    positional.add("file", 1);
    po::variables_map vm;
    if (!parse_command_line(kInspect, argc, argv, opts, positional, vm)) return 0;
    const File f(path);  // throws gguf::ParseError: main reports it and exits 1
    if (vm.count("json"))
        print_json(f);
    else
        print_table(f);
    return 0;
}

}  // namespace memra::gguf_tool
