// memra-gguf synth OUT.gguf: a real GGUF v3 file holding an MoE model's expert tensors (and the
// metadata that locates them), with seeded synthetic weights quantized by memra_quantize.
#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>

#include "cli.h"
#include "gguf_writer.h"
#include "json_writer.h"
#include "memra/qtypes.h"
#include "moe_layout.h"
#include "presets.h"
#include "progress.h"
#include "quantize.h"

namespace memra::gguf_tool {
namespace {

const Command kSynth{
    "synth", "OUT.gguf [--arch PRESET] [--n-embd N --n-ff N --n-expert N --layers N] [--qtype T ...]",
    "Write a GGUF v3 file of an MoE model's expert tensors blk.N.ffn_{gate,up,down}_exps.weight\n"
    "(ggml order [n_embd, n_ff, n_expert] and [n_ff, n_embd, n_expert]) with seeded synthetic weights,\n"
    "quantized by the project's encoders. Presets: tiny (default), qwen3-30b-a3b, mixtral-8x7b; the\n"
    "dimension options override the preset's. Formats: f32 bf16 q4_0 q8_0 q2_K q3_K q4_K q5_K q6_K\n"
    "iq3_s iq4_xs nvfp4 (case-insensitive).",
    "  memra-gguf synth tiny.gguf\n"
    "  memra-gguf synth q30b-1layer.gguf --arch qwen3-30b-a3b --layers 1 --qtype q4_K --qtype-down q6_K\n"
    "  memra-gguf synth mixed.gguf --n-embd 1024 --n-ff 512 --n-expert 4 --layers 3 --qtype iq4_xs --json\n"};

struct Projection {
    const char *name;  // "gate", "up", "down"
    uint32_t qtype;
    uint32_t in, out;  // row length and rows per expert
};

uint32_t parse_qtype(const std::string &option, const std::string &name) {
    const auto id = gguf::tensor_type_from_name(name);
    if (!id || !gguf::library_supports(*id))
        throw UsageError("--" + option + " '" + name + "' is not one of the library's formats (f32 bf16 q4_0 q8_0 q2_K "
                         "q3_K q4_K q5_K q6_K iq3_s iq4_xs nvfp4)");
    return *id;
}

// SplitMix64: a well-mixed seed for each (layer, projection, expert), so that every expert's
// weights depend only on the seed and its position, not on the order they are generated in.
uint64_t mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// One expert's matrix, rows x in values, like a trained FFN weight: N(0, sigma_r^2) per row with
// sigma_r = exp(0.25 N(0,1)) / sqrt(in) (rows differ in scale, as trained rows do; the 1/sqrt(in)
// keeps activations O(1) through the layer), and 0.5% of values 4x wider (the outliers quantizers
// must cope with).
void synth_matrix(uint64_t seed, uint32_t rows, uint32_t in, std::vector<float> &w) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    w.resize(size_t(rows) * in);
    for (uint32_t r = 0; r < rows; ++r) {
        const float sigma = std::exp(0.25f * normal(rng)) / std::sqrt(float(in));
        for (uint32_t i = 0; i < in; ++i) w[size_t(r) * in + i] = sigma * normal(rng) * (uniform(rng) < 0.005f ? 4.0f : 1.0f);
    }
}

void check_shape(const Projection &p) {
    const memra_qtype_info *q = memra_qtype_find(int32_t(p.qtype));
    if (p.in % uint32_t(q->block_elems) != 0)
        throw UsageError(std::string(p.name) + " rows have " + std::to_string(p.in) + " values, not a multiple of " +
                         q->name + "'s block of " + std::to_string(q->block_elems));
}

struct SynthOptions {
    ModelShape shape;
    Projection proj[3];
    uint64_t seed = 1;
    uint32_t alignment = 32;
    int threads = 1;
    int progress = -1;
};

// The whole file: metadata, then per layer the gate, up and down expert tensors.
void write_model(const std::string &path, const SynthOptions &o) {
    const ModelShape &s = o.shape;
    gguf::Writer w(o.alignment);
    const std::string a = s.architecture;
    w.add_string("general.architecture", a);
    w.add_string("general.name", "memra synthetic " + s.preset);
    w.add_u32(a + ".block_count", s.layers);
    w.add_u32(a + ".embedding_length", s.n_embd);
    w.add_u32(a + ".expert_count", s.n_expert);
    w.add_u32(a + ".expert_used_count", s.n_expert_used);
    w.add_u32(a + ".expert_feed_forward_length", s.n_ff);
    if (a == "llama") w.add_u32(a + ".feed_forward_length", s.n_ff);  // where llama.cpp reads Mixtral's
    w.add_u64("memra.synth.seed", o.seed);
    for (uint32_t l = 0; l < s.layers; ++l)
        for (const Projection &p : o.proj) w.add_tensor(gguf::expert_tensor_name(int(l), p.name), p.qtype, {p.in, p.out, s.n_expert});

    Progress progress("synth", uint64_t(s.layers) * 3, o.progress);
    std::vector<uint8_t> bytes;
    w.write(path, [&](size_t index, const gguf::Writer::Sink &out) {
        const Projection &p = o.proj[index % 3];
        const size_t expert_bytes = quantize::row_bytes(int32_t(p.qtype), p.in) * p.out;
        bytes.resize(expert_bytes * s.n_expert);
#pragma omp parallel for num_threads(o.threads) schedule(dynamic)
        for (int64_t e = 0; e < int64_t(s.n_expert); ++e) {
            std::vector<float> m;
            synth_matrix(mix(o.seed ^ mix(index * 4096 + uint64_t(e))), p.out, p.in, m);
            const std::vector<uint8_t> q = quantize::quantize_rows(int32_t(p.qtype), m.data(), p.out, p.in);
            std::copy(q.begin(), q.end(), bytes.begin() + int64_t(size_t(e) * expert_bytes));
        }
        out(bytes.data(), bytes.size());
        progress.update(index + 1);
    });
}

}  // namespace

int synth_main(int argc, char **argv) {
    std::string out_path, arch = "tiny", qtype = "q4_K", qtype_gate, qtype_up, qtype_down;
    int64_t n_embd = 0, n_ff = 0, n_expert = 0, layers = 0;  // signed: Boost wraps "-3" into an unsigned
    SynthOptions o;
    po::options_description opts("options");
    opts.add_options()
        ("out", po::value(&out_path)->required(), "the file to write (positional)")
        ("arch", po::value(&arch), "preset: tiny (512/256, 8 experts, 2 layers), qwen3-30b-a3b, mixtral-8x7b")
        ("n-embd", po::value(&n_embd), "model width (gate/up row length, down rows)")
        ("n-ff", po::value(&n_ff), "expert FFN width (gate/up rows, down row length)")
        ("n-expert", po::value(&n_expert), "experts per layer")
        ("layers", po::value(&layers), "number of MoE layers")
        ("qtype", po::value(&qtype), "format of all three projections (default q4_K)")
        ("qtype-gate", po::value(&qtype_gate), "format of the gate projection (overrides --qtype)")
        ("qtype-up", po::value(&qtype_up), "format of the up projection")
        ("qtype-down", po::value(&qtype_down), "format of the down projection")
        ("seed", po::value(&o.seed)->default_value(1), "seed of the synthetic weights")
        ("alignment", po::value(&o.alignment)->default_value(32), "general.alignment (a power of two)")
        ("threads", po::value(&o.threads)->default_value(omp_get_max_threads()), "encoder threads")
        ("progress", "show a progress bar even when stderr is not a terminal")
        ("json", "print what was written as one JSON object");
    po::positional_options_description positional;
    positional.add("out", 1);
    po::variables_map vm;
    if (!parse_command_line(kSynth, argc, argv, opts, positional, vm)) return 0;

    o.shape = preset(arch);
    ModelShape &s = o.shape;
    for (auto [value, field, name] : {std::tuple{n_embd, &s.n_embd, "n-embd"}, {n_ff, &s.n_ff, "n-ff"},
                                      {n_expert, &s.n_expert, "n-expert"}, {layers, &s.layers, "layers"}}) {
        if (!vm.count(name)) continue;
        constexpr int64_t kMax = 1 << 20;  // beyond any real model; keeps sizes far from overflow
        if (value < 1 || value > kMax)
            throw UsageError(std::string("--") + name + " must be at least 1" + (value > kMax ? " and at most 2^20" : ""));
        *field = uint32_t(value);
    }
    if (s.n_expert_used > s.n_expert) s.n_expert_used = s.n_expert;
    if (o.threads < 1) throw UsageError("--threads must be at least 1");
    if (o.alignment == 0 || (o.alignment & (o.alignment - 1)) != 0)
        throw UsageError("--alignment " + std::to_string(o.alignment) + " is not a power of two");
    if (vm.count("progress")) o.progress = 1;
    const uint32_t all = parse_qtype("qtype", qtype);
    o.proj[0] = {"gate", qtype_gate.empty() ? all : parse_qtype("qtype-gate", qtype_gate), s.n_embd, s.n_ff};
    o.proj[1] = {"up", qtype_up.empty() ? all : parse_qtype("qtype-up", qtype_up), s.n_embd, s.n_ff};
    o.proj[2] = {"down", qtype_down.empty() ? all : parse_qtype("qtype-down", qtype_down), s.n_ff, s.n_embd};
    for (const Projection &p : o.proj) check_shape(p);

    const auto t0 = std::chrono::steady_clock::now();
    write_model(out_path, o);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    uint64_t weight_bytes = 0;
    for (const Projection &p : o.proj) weight_bytes += quantize::row_bytes(int32_t(p.qtype), p.in) * p.out * s.n_expert * s.layers;
    auto name = [](uint32_t t) { return gguf::tensor_type_name(t); };
    if (vm.count("json")) {
        tools::JsonWriter j(std::cout);
        j.begin_object().field("file", out_path).field("preset", s.preset).field("architecture", s.architecture)
            .field("n_embd", int64_t(s.n_embd)).field("n_ff", int64_t(s.n_ff)).field("n_expert", int64_t(s.n_expert))
            .field("layers", int64_t(s.layers)).field("gate", name(o.proj[0].qtype)).field("up", name(o.proj[1].qtype))
            .field("down", name(o.proj[2].qtype)).field("seed", int64_t(o.seed)).field("tensors", int64_t(3 * s.layers))
            .field("weight_bytes", int64_t(weight_bytes)).field("seconds", seconds).end_object();
        std::cout << "\n";
    } else {
        std::printf("wrote %s: %s (%s), %u layer%s x %u experts, n_embd %u, n_ff %u\n"
                    "  gate %s, up %s, down %s; %u tensors, %.1f MiB of weights, seed %llu, %.2f s\n",
                    out_path.c_str(), s.preset.c_str(), s.architecture.c_str(), s.layers, s.layers == 1 ? "" : "s", s.n_expert, s.n_embd, s.n_ff,
                    name(o.proj[0].qtype).c_str(), name(o.proj[1].qtype).c_str(), name(o.proj[2].qtype).c_str(),
                    3 * s.layers, double(weight_bytes) / (1 << 20), (unsigned long long)o.seed, seconds);
    }
    return 0;
}

}  // namespace memra::gguf_tool
