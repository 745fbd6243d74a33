// memra-demo: the README's main job, on a built-in default. It synthesizes a small MoE GGUF file
// (layers whose projections use each of the library's formats once; tools/gguf's
// writer), loads libmemra-cpu-experts.so.2 exactly as the engine does (dlopen + dlsym), evaluates
// every layer's experts token after token and in batches of rows, from both weight sources (the
// mapped file, and file_fd + file_offset), and checks each result three ways: against the same
// run on the scalar reference backend (a child process, the check of `memra-gguf run`), against
// the double-precision references of the expert kit, and the file source against the memory source.
// Exit 0 only if every check passes; 1 if one fails or something cannot be done; 2 for bad
// arguments.
#include <stdlib.h>

#include <boost/program_options.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "cases.h"
#include "checks.h"
#include "library_path.h"
#include "memra/qtypes.h"
#include "scalar_check.h"
#include "served_by.h"
#include "timing.h"

namespace po = boost::program_options;
using namespace memra;

namespace {

const char *kExamples =
    "examples:\n"
    "  memra-demo                           # 8 tokens, rows of 8, 2 threads\n"
    "  memra-demo --threads 8 --tokens 64 --rows 32\n"
    "  memra-demo --keep demo.gguf && memra-gguf inspect demo.gguf\n"
    "  MEMRA_CPU_EXPERT_BACKEND=avx2 memra-demo                # that plugin vs scalar\n"
    "  MEMRA_CPU_EXPERT_DISABLE_FEATURES=avx_vnni memra-demo   # as on a Zen 4\n";

struct Options {
    std::string lib, keep, model, scalar_child;
    int threads = 2, tokens = 8, rows = 8;
    uint64_t seed = 1;
};

class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Where the synthesized model and the scalar child's outputs go; removed with everything in it.
class ScratchDir {
public:
    ScratchDir() {
        const std::filesystem::path parent = std::filesystem::temp_directory_path();
        std::string t = (parent / "memra-demo-XXXXXX").string();
        if (!::mkdtemp(t.data()))
            throw std::runtime_error("cannot create a directory in " + parent.string() + ": " + std::strerror(errno));
        path_ = t;
    }
    ~ScratchDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    std::string file(const char *name) const { return (path_ / name).string(); }

private:
    std::filesystem::path path_;
};

// Returns false after printing the help.
bool parse(int argc, char **argv, Options &o) {
    po::options_description visible(
        "memra-demo: synthesize a small MoE GGUF model covering every weight format, evaluate it through\n"
        "libmemra-cpu-experts as the engine does (memory and file weights), check every result against\n"
        "the scalar backend and a double-precision reference. Exit 0 only if every check passes.\n\nOptions");
    visible.add_options()
        ("help,h", "show this help")
        ("threads", po::value(&o.threads)->default_value(2), "threads per library call")
        ("tokens", po::value(&o.tokens)->default_value(8), "tokens per layer and weight source, for each call")
        ("rows", po::value(&o.rows)->default_value(8), "rows per memra_cpu_expert_rows_v2 call, 1..64 (the tokens in batches)")
        ("seed", po::value(&o.seed)->default_value(1), "seed of the synthetic weights and inputs")
        ("keep", po::value(&o.keep), "write the model to this file and keep it (default: a temporary directory)")
        ("lib", po::value(&o.lib), "library to dlopen (default: $MEMRA_CPU_EXPERT_LIB, else the one beside this program, else the soname)");
    po::options_description hidden;  // the scalar child's protocol, not for people
    hidden.add_options()("scalar-child", po::value(&o.scalar_child))("model", po::value(&o.model));
    po::options_description all;
    all.add(visible).add(hidden);
    po::variables_map vm;
    try {
        // No positional arguments: an empty description makes Boost refuse them (it would drop them).
        po::store(po::command_line_parser(argc, argv).options(all).positional({}).run(), vm);
        po::notify(vm);
    } catch (const po::error &e) {
        throw UsageError(e.what());
    }
    if (vm.count("help")) {
        std::cout << visible << "\n" << kExamples;
        return false;
    }
    if (o.threads < 1) throw UsageError("--threads must be at least 1");
    if (o.tokens < 1 || o.tokens > 100000) throw UsageError("--tokens must be between 1 and 100000");
    if (o.rows < 1 || o.rows > 64) throw UsageError("--rows must be between 1 and 64 (the ABI's limit)");
    if (o.scalar_child.empty() != o.model.empty()) throw UsageError("--scalar-child and --model go together");
    if (o.lib.empty()) o.lib = tools::default_library_path();
    return true;
}

// dlopen + dlsym as the engine does; throws with dlopen's reason or the missing symbol.
memra_loaded_abi open_library(const std::string &path) {
    memra_loaded_abi abi;
    char error[1024] = "";
    if (memra_loaded_abi_open(path.c_str(), &abi, error, sizeof error) != 0) throw std::runtime_error(error);
    return abi;
}

// The scalar child: the same cases on the scalar backend, every output written to o.scalar_child.
int scalar_child(const Options &o) {
    memra_loaded_abi abi = open_library(o.lib);
    const gguf::File file(o.model);
    const std::vector<demo::Case> cases = demo::run_cases(abi, file, o.tokens, o.rows, o.seed, o.threads);
    memra_loaded_abi_close(&abi);
    for (const demo::Case &c : cases)
        if (!c.result.failure.empty()) throw std::runtime_error("scalar backend: " + c.result.failure);
    gguf_tool::write_floats(o.scalar_child, demo::all_outputs(cases));
    return 0;
}

// Runs the scalar child on the model and returns its outputs; when it fails, none, and failure
// says how.
std::vector<float> scalar_outputs(const Options &o, const std::string &model, const std::string &dump, std::string &failure) {
    const int status = gguf_tool::run_self_with_scalar_backend(
        {"--scalar-child", dump, "--model", model, "--tokens", std::to_string(o.tokens), "--rows", std::to_string(o.rows),
         "--seed", std::to_string(o.seed), "--threads", std::to_string(o.threads), "--lib", o.lib});
    if (status != 0) {
        failure = "the scalar run exited with status " + std::to_string(status);
        return {};
    }
    return gguf_tool::read_floats(dump);
}

int demo_main(const Options &o) {
    memra_loaded_abi abi = open_library(o.lib);
    const std::string line = gguf_tool::describe_library(abi);
    std::printf("library: %s\n%s\n", o.lib.c_str(), line.empty() ? "(the library has no describe line)" : line.c_str());

    const ScratchDir scratch;
    const std::string model = o.keep.empty() ? scratch.file("demo.gguf") : o.keep;
    const gguf_tool::SynthSpec spec = demo::demo_model(o.seed, o.threads);
    const auto t0 = std::chrono::steady_clock::now();
    gguf_tool::write_model(model, spec);
    const double synth_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("model: %s%s: %u MoE layers x %u experts, n_embd %u, n_ff %u, all %d formats, %.1f MiB, written in %.2f s\n",
                model.c_str(), o.keep.empty() ? " (temporary)" : "", spec.shape.layers, spec.shape.n_expert,
                spec.shape.n_embd, spec.shape.n_ff, int(MEMRA_QTYPE_COUNT), double(gguf_tool::weight_bytes(spec)) / (1 << 20), synth_s);
    std::printf("run:   %d tokens per layer and weight source, 2 experts each, by the token call and by the rows call\n"
                "       in batches of %d, %d thread%s, seed %llu\n\n", o.tokens, std::min(o.rows, o.tokens), o.threads,
                o.threads == 1 ? "" : "s", (unsigned long long)o.seed);

    const gguf::File file(model);
    std::vector<demo::Case> cases = demo::run_cases(abi, file, o.tokens, o.rows, o.seed, o.threads);
    demo::time_cases(abi, file, cases, o.threads);
    memra_loaded_abi_close(&abi);

    std::string scalar_failure;
    const std::vector<float> scalar = scalar_outputs(o, model, scratch.file("scalar.f32"), scalar_failure);
    const demo::Report report = demo::check(file, cases, scalar, scalar_failure, demo::served_by(line));
    demo::print(report);
    std::printf("%s\n", report.all_passed() ? "all checks passed" : "SOME CHECKS FAILED");
    return report.all_passed() ? 0 : 1;
}

}  // namespace

int main(int argc, char **argv) {
    Options o;
    try {
        if (!parse(argc, argv, o)) return 0;
    } catch (const UsageError &e) {
        std::cerr << "memra-demo: " << e.what() << " (see memra-demo --help)\n";
        return 2;
    }
    try {
        return o.scalar_child.empty() ? demo_main(o) : scalar_child(o);
    } catch (const std::exception &e) {
        std::fflush(stdout);
        std::cerr << "memra-demo: " << e.what() << "\n";
        return 1;
    }
}
