// memra-gguf run FILE --layer N: evaluates a layer's experts through the public ABI exactly as
// the engine would (dlopen + dlsym of libmemra-cpu-experts.so.2, CpuExpertV2 records pointing at
// each expert's slice of the merged tensors, in memory or by file offset), and reports per-token
// latency, weight GB/s, cache counters and agreement with the scalar reference backend.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "json.h"
#include "layer_experts.h"
#include "library_path.h"
#include "scalar_check.h"
#include "token_run.h"

namespace memra::gguf_tool {
namespace {

const Command kRun{
    "run", "FILE --layer N [--experts IDS --weights WS] [--tokens T] [--rows M] [--source memory|file] [--threads N]",
    "Evaluate the experts of one MoE layer of a GGUF file through libmemra-cpu-experts, as the engine\n"
    "does, for T tokens of seeded N(0,1) inputs: one memra_cpu_moe_token_v2 call per token (decoding),\n"
    "or with --rows M, M tokens at once, one memra_cpu_expert_rows_v2 call per expert (prefill), the\n"
    "experts' outputs summed. Reports latency per call (median, p90), GB/s of weight bytes, the\n"
    "library's cache counters, and the largest relative L2 difference from the same run on the scalar\n"
    "reference backend (a child process with MEMRA_CPU_EXPERT_BACKEND=scalar). Exit 1 when a call\n"
    "fails or the outputs disagree.",
    "  memra-gguf run tiny.gguf --layer 0\n"
    "  memra-gguf run tiny.gguf --layer 1 --experts 0,3,5 --weights 0.5,0.3,0.2 --tokens 200 --threads 2\n"
    "  memra-gguf run q30b.gguf --layer 0 --source file --tokens 1000 --json\n"
    "  memra-gguf run q30b.gguf --layer 0 --tokens 256 --rows 64      # prefill: 4 batches of 64 rows\n"};

template <class T>
std::vector<T> parse_list(const std::string &option, const std::string &text) {
    std::vector<T> out;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, ',');) {
        std::istringstream one(item);
        T v;
        if (!(one >> v) || !one.eof() || (std::is_unsigned_v<T> && item.find('-') != std::string::npos))
            throw UsageError("--" + option + ": '" + item + "' is not a valid value");
        out.push_back(v);
    }
    if (out.empty()) throw UsageError("--" + option + " is empty");
    return out;
}

struct RunOptions {
    std::string path, lib, source = "memory", dump_outputs, dump_inputs;
    int layer = -1, tokens = 16, rows = 0, threads = 1, progress = -1;  // rows 0: the token call
    uint64_t seed = 1;
    std::vector<uint32_t> experts;
    std::vector<float> weights;
    bool json = false, check = true;
};

// The child's arguments: this run with the same experts, inputs and source, dumping its outputs.
std::vector<std::string> scalar_child_args(const RunOptions &o, const std::string &dump) {
    std::string ids, ws;
    char buf[32];
    for (size_t i = 0; i < o.experts.size(); ++i) {
        ids += (i ? "," : "") + std::to_string(o.experts[i]);
        std::snprintf(buf, sizeof buf, "%.9g", double(o.weights[i]));  // 9 digits: the exact float
        ws += (i ? "," : "") + std::string(buf);
    }
    return {"run", o.path, "--layer", std::to_string(o.layer), "--experts", ids, "--weights", ws,
            "--tokens", std::to_string(o.tokens), "--rows", std::to_string(o.rows), "--source", o.source, "--threads", std::to_string(o.threads),
            "--seed", std::to_string(o.seed), "--lib", o.lib, "--no-check", "--dump-outputs", dump};
}

struct Check {
    bool done = false, pass = true, identical = false;
    double max_rel_l2 = 0;
    std::string failure;
};

Check check_against_scalar(const RunOptions &o, const std::vector<float> &outputs, uint64_t n_embd) {
    Check c;
    if (!o.check) return c;
    c.done = true;
    const std::string dump = (std::filesystem::temp_directory_path() /
                              ("memra-gguf-scalar-" + std::to_string(::getpid()) + ".f32")).string();
    const int status = run_self_with_scalar_backend(scalar_child_args(o, dump));
    if (status != 0) {
        c.pass = false;
        c.failure = "the scalar run exited with status " + std::to_string(status);
        std::filesystem::remove(dump);
        return c;
    }
    const std::vector<float> reference = read_floats(dump);
    std::filesystem::remove(dump);
    const Agreement a = compare_with_scalar(outputs, reference, n_embd);
    c.max_rel_l2 = a.max_rel_l2;
    c.identical = a.identical;
    c.pass = a.pass();
    return c;
}

void report(const RunOptions &o, const gguf::MoeLayer &layer, const LayerExperts &experts, const Measurement &m,
            const Check &c, const std::string &library_line) {
    const double median = percentile(m.latency_s, 0.5), p90 = percentile(m.latency_s, 0.9);
    const double gbps = double(experts.weight_bytes()) / median / 1e9;
    auto type = [](const gguf::TensorInfo *t) { return gguf::tensor_type_name(t->type); };
    if (o.json) {
        using tools::Json;
        Json j{{"file", o.path},
               {"layer", o.layer},
               {"n_embd", layer.n_embd},
               {"n_ff", layer.n_ff},
               {"gate", type(layer.gate)},
               {"up", type(layer.up)},
               {"down", type(layer.down)},
               {"experts", o.experts},
               {"weights", Json::array()},
               {"tokens", o.tokens},
               {"rows", o.rows},
               {"source", o.source},
               {"threads", o.threads},
               {"library", o.lib},
               {"describe", library_line},
               {"latency_us", {{"first", m.latency_s.front() * 1e6}, {"median", median * 1e6}, {"p90", p90 * 1e6}}},
               {"weight_bytes_per_token", experts.weight_bytes()},
               {"gb_per_s", gbps},
               {"cache", {{"hits", m.cache[0]}, {"misses", m.cache[1]}, {"read_bytes", m.cache[2]}, {"resident_bytes", m.cache[3]}}},
               {"profile_ns", {{"prepare", m.profile[0]}, {"io", m.profile[1]}, {"insert", m.profile[2]}, {"compute", m.profile[3]}}}};
        for (float w : o.weights) j["weights"].push_back(double(w));
        Json &check = j["scalar_check"] = {{"done", c.done}};
        if (c.done) {
            check["max_rel_l2"] = c.max_rel_l2;
            check["identical"] = c.identical;
            check["pass"] = c.pass;
            check["failure"] = c.failure;
        }
        std::cout << tools::dump_json(j);
        std::cout << "\n";
        return;
    }
    std::printf("file        %s, layer %d: %llu experts, n_embd %llu, n_ff %llu, gate %s, up %s, down %s\n", o.path.c_str(),
                o.layer, (unsigned long long)layer.n_expert, (unsigned long long)layer.n_embd,
                (unsigned long long)layer.n_ff, type(layer.gate).c_str(), type(layer.up).c_str(), type(layer.down).c_str());
    std::printf("library     %s\n            %s\n", o.lib.c_str(), library_line.c_str());
    std::string sel;
    for (size_t i = 0; i < o.experts.size(); ++i)
        sel += (i ? " " : "") + std::to_string(o.experts[i]) + ":" + std::to_string(o.weights[i]).substr(0, 6);
    std::printf("experts     %s (id:weight), weights from %s, %d threads, %d tokens\n", sel.c_str(), o.source.c_str(),
                o.threads, o.tokens);
    const std::string per = o.rows ? "per batch of " + std::to_string(o.rows) + " rows (one rows call per expert)" : "per token";
    std::printf("latency     first %.1f us, median %.1f us, p90 %.1f us %s\n", m.latency_s.front() * 1e6, median * 1e6,
                p90 * 1e6, per.c_str());
    std::printf("bandwidth   %.2f GB/s (%.2f MB of weights %s / median)\n", gbps, double(experts.weight_bytes()) / 1e6,
                o.rows ? "per batch" : "per token");
    std::printf("cache       hits %llu, misses %llu, read %llu bytes, resident %llu bytes\n", (unsigned long long)m.cache[0],
                (unsigned long long)m.cache[1], (unsigned long long)m.cache[2], (unsigned long long)m.cache[3]);
    std::printf("profile     prepare %.3f ms, io %.3f ms, insert %.3f ms, compute %.3f ms\n", m.profile[0] / 1e6,
                m.profile[1] / 1e6, m.profile[2] / 1e6, m.profile[3] / 1e6);
    if (!c.done)
        std::printf("scalar      not checked (--no-check)\n");
    else if (!c.failure.empty())
        std::printf("scalar      FAIL: %s\n", c.failure.c_str());
    else
        std::printf("scalar      max relative L2 difference %.3g, %s (bit-identical required): %s\n", c.max_rel_l2,
                    c.identical ? "bit-identical" : "NOT bit-identical", c.pass ? "pass" : "FAIL");
}

}  // namespace

int run_main(int argc, char **argv) {
    RunOptions o;
    std::string experts_text, weights_text;
    po::options_description opts("options");
    opts.add_options()
        ("file", po::value(&o.path)->required(), "the GGUF file (positional)")
        ("layer", po::value(&o.layer)->required(), "the MoE layer (blk.N) to evaluate")
        ("experts", po::value(&experts_text), "comma-separated expert ids (default: the first expert_used_count)")
        ("weights", po::value(&weights_text), "comma-separated route weights, one per expert (default: equal, sum 1)")
        ("tokens", po::value(&o.tokens)->default_value(16), "tokens to evaluate (one call each, or batches of --rows)")
        ("rows", po::value(&o.rows)->default_value(0), "M in 1..64: M tokens per memra_cpu_expert_rows_v2 call (0: the token call)")
        ("source", po::value(&o.source)->default_value("memory"), "memory: the mapped file; file: file_fd + file_offset")
        ("threads", po::value(&o.threads)->default_value(omp_get_max_threads()), "threads per call")
        ("seed", po::value(&o.seed)->default_value(1), "seed of the N(0,1) inputs")
        ("lib", po::value(&o.lib), "library to dlopen (default: $MEMRA_CPU_EXPERT_LIB, else beside this program)")
        ("json", "print one JSON object")
        ("progress", "show the progress bar even when stderr is not a terminal")
        ("no-check", "skip the comparison with the scalar backend")
        ("dump-outputs", po::value(&o.dump_outputs), "write the outputs (tokens x n_embd f32) to this file")
        ("dump-inputs", po::value(&o.dump_inputs), "write the inputs (tokens x n_embd f32) to this file");
    po::positional_options_description positional;
    positional.add("file", 1);
    po::variables_map vm;
    if (!parse_command_line(kRun, argc, argv, opts, positional, vm)) return 0;
    o.json = vm.count("json") > 0;
    o.check = vm.count("no-check") == 0;
    if (vm.count("progress")) o.progress = 1;
    if (o.tokens < 1) throw UsageError("--tokens must be at least 1");
    if (o.threads < 1) throw UsageError("--threads must be at least 1");
    if (o.rows < 0 || o.rows > 64) throw UsageError("--rows must be between 1 and 64 (the ABI's limit), or 0 for the token call");
    if (o.rows > 0 && o.tokens % o.rows != 0)
        throw UsageError("--tokens " + std::to_string(o.tokens) + " is not a whole number of batches of --rows " + std::to_string(o.rows));
    if (o.source != "memory" && o.source != "file") throw UsageError("--source must be memory or file, not '" + o.source + "'");
    if (o.lib.empty()) o.lib = tools::default_library_path();
    if (!experts_text.empty()) o.experts = parse_list<uint32_t>("experts", experts_text);
    if (!weights_text.empty()) o.weights = parse_list<float>("weights", weights_text);
    for (float w : o.weights)
        if (!std::isfinite(w)) throw UsageError("--weights must be finite");

    const gguf::File file(o.path);
    const std::vector<gguf::MoeLayer> layers = gguf::find_moe_layers(file.model());
    const auto layer = std::find_if(layers.begin(), layers.end(), [&](const gguf::MoeLayer &l) { return l.layer == o.layer; });
    if (layer == layers.end())
        throw UsageError("the file has no MoE layer " + std::to_string(o.layer) + " (it has " + std::to_string(layers.size()) +
                         (layers.empty() ? ")" : ": " + std::to_string(layers.front().layer) + ".." + std::to_string(layers.back().layer) + ")"));
    if (o.experts.empty()) {
        const gguf::Value *used = file.model().find_value(file.model().architecture() + ".expert_used_count");
        const uint64_t k = std::min<uint64_t>(used && used->as_uint() ? *used->as_uint() : 8, layer->n_expert);
        for (uint32_t e = 0; e < std::max<uint64_t>(k, 1); ++e) o.experts.push_back(e);
    }
    if (o.weights.empty()) o.weights.assign(o.experts.size(), 1.0f / float(o.experts.size()));
    if (o.weights.size() != o.experts.size())
        throw UsageError("--weights has " + std::to_string(o.weights.size()) + " values for " +
                         std::to_string(o.experts.size()) + " experts");

    const LayerExperts experts(file, *layer, o.experts, o.weights,
                               o.source == "file" ? WeightSource::File : WeightSource::Memory);
    memra_loaded_abi abi;
    char error[1024] = "";
    if (memra_loaded_abi_open(o.lib.c_str(), &abi, error, sizeof error) != 0) throw std::runtime_error(error);
    const std::vector<float> inputs = make_inputs(o.seed, o.tokens, layer->n_embd);
    if (!o.dump_inputs.empty()) write_floats(o.dump_inputs, inputs);
    const Measurement m = o.rows ? measure_rows(abi, experts, inputs, layer->n_embd, o.rows, o.threads, o.progress)
                                 : measure_tokens(abi, experts, inputs, layer->n_embd, o.threads, o.progress);
    const std::string library_line = describe_library(abi);
    memra_loaded_abi_close(&abi);
    if (!m.failure.empty()) throw std::runtime_error(m.failure);
    if (!o.dump_outputs.empty()) write_floats(o.dump_outputs, m.outputs);

    const Check c = check_against_scalar(o, m.outputs, layer->n_embd);
    report(o, *layer, experts, m, c, library_line);
    return c.pass ? 0 : 1;
}

}  // namespace memra::gguf_tool
