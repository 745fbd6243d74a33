// memra-conformance: checks, on this CPU, every backend plugin it can run against the scalar
// plugin, bit for bit, for every weight format: the kernels on their own (the same quantized
// activations in, the same floats out) and full token and rows calls through the core's
// orchestration with each backend forced. The plugins are the ones installed beside the library
// (or in MEMRA_CPU_EXPERT_PLUGIN_DIR), found and gated by the core's own loader, so a plugin
// this CPU cannot run is reported as skipped, with the reason, and never loaded.
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cctype>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "backends.h"
#include "formats.h"
#include "library_open.h"
#include "library_path.h"
#include "report.h"
#include "run.h"
#include "dispatch/settings.h"

namespace po = boost::program_options;
namespace conf = memra::conformance;

namespace {

constexpr int kExitMismatch = 1;
constexpr int kExitUsage = 2;

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The directory holding the library: that of the path, or, for a bare soname, wherever the
// dynamic linker finds it.
std::string library_dir(const std::string &library) {
    memra::tools::OpenedLibrary lib;
    std::string error;
    if (!memra::tools::open_library(library, lib, error)) throw UsageError(error);
    return lib.directory();
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

std::vector<std::string> split_list(const std::string &s) {
    std::vector<std::string> items;
    std::string item;
    for (char c : s + ",") {
        if (c != ',') {
            item += c;
        } else if (!item.empty()) {
            items.push_back(item);
            item.clear();
        }
    }
    return items;
}

std::vector<int32_t> selected_qtypes(const std::string &arg) {
    if (arg == "all") return memra::expertkit::all_qtypes();
    std::vector<int32_t> ids;
    for (const std::string &name : split_list(arg)) {
        const auto it = std::find_if(std::begin(memra_qtype_table), std::end(memra_qtype_table),
                                     [&](const memra_qtype_info &q) { return lower(q.name) == lower(name); });
        if (it == std::end(memra_qtype_table)) {
            std::string known;
            for (const memra_qtype_info &q : memra_qtype_table) known += std::string(known.empty() ? "" : ", ") + q.name;
            throw UsageError("--qtype: unknown format '" + name + "' (formats: all, " + known + ")");
        }
        if (std::find(ids.begin(), ids.end(), it->id) == ids.end()) ids.push_back(it->id);
    }
    if (ids.empty()) throw UsageError("--qtype: no format named");
    return ids;
}

std::vector<const conf::Backend *> selected_backends(const conf::BackendSet &set, const std::string &arg) {
    std::vector<const conf::Backend *> chosen;
    if (arg == "all") {
        for (const conf::Backend &b : set.subjects()) chosen.push_back(&b);
        return chosen;
    }
    std::string known;
    for (const conf::Backend &b : set.subjects()) known += ", " + b.label;
    for (const std::string &name : split_list(arg)) {
        if (name == "scalar") throw UsageError("--backend: scalar is the reference every backend is compared with");
        const auto it = std::find_if(set.subjects().begin(), set.subjects().end(), [&](const conf::Backend &b) {
            return b.label == name || b.plugin_name == name;
        });
        if (it == set.subjects().end()) throw UsageError("--backend: no backend '" + name + "' found (backends: all" + known + ")");
        if (std::find(chosen.begin(), chosen.end(), &*it) == chosen.end()) chosen.push_back(&*it);
    }
    if (chosen.empty()) throw UsageError("--backend: no backend named");
    return chosen;
}

po::options_description describe_options() {
    po::options_description options(
        "memra-conformance: every backend plugin this CPU can run against the scalar reference, bit for bit,\n"
        "for every weight format (kernels alone, and full token / rows calls through the core). Prints a table\n"
        "(format x backend: pass / FAIL / skip, then why); exits 0 when all that ran agree, 1 on any mismatch,\n"
        "2 on bad usage or when there is nothing to compare with.\n\n"
        "Examples:\n"
        "  memra-conformance                                   # every backend, every format\n"
        "  memra-conformance --backend avx2 --qtype q4_K,q8_0  # some of them\n"
        "  memra-conformance --iterations 10 --seed 7          # more random data\n"
        "  memra-conformance --full                            # whole 4096x1536 experts, 64-row calls (minutes)\n"
        "  memra-conformance --list                            # the backends found, and which run here\n"
        "  memra-conformance --json > conformance.json\n"
        "  MEMRA_CPU_EXPERT_DISABLE_FEATURES=avx512f memra-conformance   # as on a CPU without AVX-512\n\n"
        "Plugins are searched in MEMRA_CPU_EXPERT_PLUGIN_DIR, then beside the library (MEMRA_CPU_EXPERT_LIB or\n"
        "--lib, else the one beside this tool).\n\n"
        "Options");
    options.add_options()
        ("help,h", "show this help")
        ("backend", po::value<std::string>()->default_value("all"), "all, or backends to check (comma-separated): the plugins --list shows, avxvnni-emulated, amx-emulated")
        ("qtype", po::value<std::string>()->default_value("all"), "all, or formats to check (comma-separated): f32, q4_0, q8_0, q2_K, ..., nvfp4")
        ("seed", po::value<uint64_t>()->default_value(1), "seed of the random weights and activations")
        ("iterations", po::value<int32_t>()->default_value(3), "how many times every case is repeated on fresh random data (>= 1)")
        ("full", "the realistic shapes in full: whole 4096x1536 and 2048x768 matrices, calls of 1, 2, 5 and 64 rows")
        ("json", "print JSON instead of a table")
        ("list", "list the backends found and whether this CPU runs them; check nothing")
        ("lib", po::value<std::string>(), "the library whose plugins to check (default: MEMRA_CPU_EXPERT_LIB, else the one beside this tool)");
    return options;
}

int run(const po::variables_map &vm) {
    const memra::Settings env = memra::read_settings();
    if (!env.problems.empty()) throw UsageError(env.problems.front());
    const int32_t iterations = vm["iterations"].as<int32_t>();
    if (iterations < 1) throw UsageError("--iterations must be at least 1, not " + std::to_string(iterations));
    const uint64_t seed = vm["seed"].as<uint64_t>();
    if (seed > uint64_t(INT64_MAX)) throw UsageError("--seed must be below 2^63");
    const std::vector<int32_t> qtypes = selected_qtypes(vm["qtype"].as<std::string>());

    const std::string lib_dir = library_dir(vm.count("lib") ? vm["lib"].as<std::string>() : memra::tools::default_library_path());
    conf::BackendLocations where;
    where.library_backend_dir = lib_dir + "/" MEMRA_BACKEND_SUBDIR;
    where.plugin_dir = env.plugin_dir;
    where.test_backend_dir = lib_dir + "/" MEMRA_TEST_BACKEND_SUBDIR;
    const memra::CpuFeatures &cpu = memra::detect_cpu_features();
    const conf::BackendSet set(where, cpu, env.disabled_features);

    conf::RunContext ctx{&cpu, &set, seed, iterations, vm.count("full") ? conf::Scope::Full : conf::Scope::Default};
    if (vm.count("list")) {
        vm.count("json") ? conf::print_backend_list_json(std::cout, ctx) : conf::print_backend_list(std::cout, ctx);
        return set.reference() ? 0 : kExitUsage;
    }
    if (!set.reference()) throw UsageError(set.problem());

    conf::RunOptions options;
    options.backends = selected_backends(set, vm["backend"].as<std::string>());
    options.qtypes = qtypes;
    options.seed = seed;
    options.iterations = iterations;
    options.scope = ctx.scope;
    if (isatty(STDERR_FILENO))
        options.progress = [](const std::string &what) { std::fprintf(stderr, "memra-conformance: checking %s\n", what.c_str()); };
    const conf::Report report = conf::run_conformance(*set.reference(), options);
    vm.count("json") ? conf::print_json(std::cout, ctx, report) : conf::print_table(std::cout, ctx, report);
    return report.any_failure() ? kExitMismatch : 0;
}

}  // namespace

int main(int argc, char **argv) {
    const po::options_description options = describe_options();
    try {
        po::variables_map vm;
        po::store(po::parse_command_line(argc, argv, options), vm);
        po::notify(vm);
        if (vm.count("help")) {
            std::cout << options << "\n";
            return 0;
        }
        return run(vm);
    } catch (const po::error &e) {
        std::fprintf(stderr, "memra-conformance: %s (see --help)\n", e.what());
    } catch (const UsageError &e) {
        std::fprintf(stderr, "memra-conformance: %s\n", e.what());
    } catch (const std::exception &e) {
        std::fprintf(stderr, "memra-conformance: internal error: %s\n", e.what());
    }
    return kExitUsage;
}
