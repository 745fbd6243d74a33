// memra-gguf synth OUT.gguf: the command line of synth_model.h, which writes a real GGUF v3 file
// holding an MoE model's expert tensors with seeded synthetic weights quantized by memra_quantize.
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "cli.h"
#include "json.h"
#include "memra/qtypes.h"
#include "moe_layout.h"
#include "synth_model.h"

namespace memra::gguf_tool {
namespace {

const Command kSynth{
    "synth", "OUT.gguf [--arch PRESET] [--n-embd N --n-ff N --n-expert N --layers N] [--qtype T ...]",
    "Write a GGUF v3 file of an MoE model's expert tensors blk.N.ffn_{gate,up,down}_exps.weight\n"
    "(ggml order [n_embd, n_ff, n_expert] and [n_ff, n_embd, n_expert]) with seeded synthetic weights,\n"
    "quantized by the project's encoders. Presets: tiny (default), qwen3-30b-a3b, mixtral-8x7b; the\n"
    "dimension options override the preset's.\nFormats:" MEMRA_QTYPE_NAMES_SPACED " (case-insensitive).",
    "  memra-gguf synth tiny.gguf\n"
    "  memra-gguf synth q30b-1layer.gguf --arch qwen3-30b-a3b --layers 1 --qtype q4_K --qtype-down q6_K\n"
    "  memra-gguf synth mixed.gguf --n-embd 1024 --n-ff 512 --n-expert 4 --layers 3 --qtype iq4_xs --json\n"};

}  // namespace

int synth_main(int argc, char **argv) {
    std::string out_path, arch = "tiny", qtype = "q4_K", qtype_gate, qtype_up, qtype_down;
    int64_t n_embd = 0, n_ff = 0, n_expert = 0, layers = 0;  // signed: Boost wraps "-3" into an unsigned
    SynthSpec o;
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
    const LayerFormats formats = {qtype_gate.empty() ? all : parse_qtype("qtype-gate", qtype_gate),
                                  qtype_up.empty() ? all : parse_qtype("qtype-up", qtype_up),
                                  qtype_down.empty() ? all : parse_qtype("qtype-down", qtype_down)};
    o.formats.assign(s.layers, formats);
    check_spec(o);  // before the file is created

    const auto t0 = std::chrono::steady_clock::now();
    write_model(out_path, o);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    const uint64_t bytes = weight_bytes(o);
    auto name = [](uint32_t t) { return gguf::tensor_type_name(t); };
    if (vm.count("json")) {
        const tools::Json j{{"file", out_path},          {"preset", s.preset},         {"architecture", s.architecture},
                            {"n_embd", s.n_embd},          {"n_ff", s.n_ff},             {"n_expert", s.n_expert},
                            {"layers", s.layers},          {"gate", name(formats[0])},   {"up", name(formats[1])},
                            {"down", name(formats[2])},    {"seed", o.seed},             {"tensors", 3 * s.layers},
                            {"weight_bytes", bytes},       {"seconds", seconds}};
        std::cout << tools::dump_json(j) << "\n";
    } else {
        std::printf("wrote %s: %s (%s), %u layer%s x %u experts, n_embd %u, n_ff %u\n"
                    "  gate %s, up %s, down %s; %u tensors, %.1f MiB of weights, seed %llu, %.2f s\n",
                    out_path.c_str(), s.preset.c_str(), s.architecture.c_str(), s.layers, s.layers == 1 ? "" : "s", s.n_expert, s.n_embd, s.n_ff,
                    name(formats[0]).c_str(), name(formats[1]).c_str(), name(formats[2]).c_str(),
                    3 * s.layers, double(bytes) / (1 << 20), (unsigned long long)o.seed, seconds);
    }
    return 0;
}

}  // namespace memra::gguf_tool
