// memra-gguf inspect FILE: what a GGUF file holds (header, metadata, tensors), which MoE layers
// it has, and whether the library can evaluate each of their formats.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "cli.h"
#include "gguf_file.h"
#include "json_writer.h"
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

void json_value(tools::JsonWriter &j, const gguf::Value &v) {
    switch (v.type) {
    case ValueType::STRING: j.value(v.s); break;
    case ValueType::BOOL: j.value(v.u != 0); break;
    case ValueType::FLOAT32: case ValueType::FLOAT64: j.value(v.f); break;
    case ValueType::INT8: case ValueType::INT16: case ValueType::INT32: case ValueType::INT64: j.value(v.i); break;
    case ValueType::ARRAY:
        j.begin_object().field("element_type", gguf::value_type_name(uint32_t(v.elem_type)))
            .field("count", int64_t(v.count)).key("head").begin_array();
        for (const gguf::Value &e : v.head) json_value(j, e);
        j.end_array().end_object();
        break;
    default: j.value(int64_t(v.u));  // u64 values above 2^63 do not occur in real files
    }
}

void print_json(const File &f) {
    const Model &m = f.model();
    tools::JsonWriter j(std::cout);
    j.begin_object().field("file", f.path()).field("file_size", int64_t(m.file_size))
        .field("version", int64_t(m.version)).field("tensor_count", int64_t(m.tensors.size()))
        .field("kv_count", int64_t(m.kvs.size())).field("alignment", int64_t(m.alignment))
        .field("data_offset", int64_t(m.data_offset));
    j.key("kvs").begin_array();
    for (const gguf::KeyValue &kv : m.kvs) {
        j.begin_object().field("key", kv.key).field("type", gguf::value_type_name(uint32_t(kv.value.type))).key("value");
        json_value(j, kv.value);
        j.end_object();
    }
    j.end_array().key("tensors").begin_array();
    for (const TensorInfo &t : m.tensors) {
        j.begin_object().field("name", t.name).field("type", gguf::tensor_type_name(t.type)).field("type_id", int64_t(t.type));
        j.key("shape").begin_array();
        for (uint64_t d : t.dims) j.value(int64_t(d));
        j.end_array().field("offset", int64_t(t.offset)).key("bytes");
        if (t.bytes) j.value(int64_t(*t.bytes)); else j.value("unknown");
        j.field("supported", gguf::library_supports(t.type)).end_object();
    }
    j.end_array().key("formats").begin_array();
    for (const FormatUse &f : formats_used(m))
        j.begin_object().field("type", gguf::tensor_type_name(f.type)).field("tensors", int64_t(f.tensors))
            .field("bytes", int64_t(f.bytes)).field("supported", gguf::library_supports(f.type)).end_object();
    j.end_array().key("moe_layers").begin_array();
    for (const gguf::MoeLayer &l : gguf::find_moe_layers(m)) {
        j.begin_object().field("layer", int64_t(l.layer)).field("n_expert", int64_t(l.n_expert))
            .field("n_embd", int64_t(l.n_embd)).field("n_ff", int64_t(l.n_ff));
        for (auto [proj, t] : {std::pair{"gate", l.gate}, {"up", l.up}, {"down", l.down}})
            j.field(proj, t ? gguf::tensor_type_name(t->type) : std::string());
        j.field("supported", l.usable()).field("problem", l.problem).end_object();
    }
    j.end_array().key("library_formats").begin_array();
    for (const memra_qtype_info &q : memra_qtype_table) j.value(q.name);
    j.end_array().end_object();
    std::cout << "\n";
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
