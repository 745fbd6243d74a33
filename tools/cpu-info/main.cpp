// memra-cpu-info: what this CPU will use. Shows the CPU and the features CPUID/XGETBV report,
// every backend plugin found beside the library (its requirements, and usable or why not), the
// backend `auto` picks, which plugin serves each format, and whether an environment variable
// changes that choice. The same selection code as the library runs here, on the library's own
// plugin directory; the library's own describe line is printed beside it as a cross-check. It
// also shows the NUMA nodes as the library reads them (numa/topology.h) and what it does with them.
#include <dlfcn.h>
#include <sched.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <string>

#include "dispatch/backend_registry.h"
#include "dispatch/cpu_features.h"
#include "dispatch/tuning.h"
#include "json.h"
#include "library_open.h"
#include "library_path.h"
#include "memra/qtypes.h"
#include "numa/topology.h"

namespace po = boost::program_options;

namespace {

struct Library {
    std::string path;         // as resolved by the dynamic linker
    std::string backend_dir;  // where it looks for plugins beside itself
    std::string describe;     // its own one-line report
};

// Loads the library as the engine does and asks it where it lives and what it chose.
bool open_library(const std::string &requested, Library &lib, std::string &error) {
    memra::tools::OpenedLibrary opened;
    if (!memra::tools::open_library(requested, opened, error)) return false;
    auto describe = reinterpret_cast<size_t (*)(char *, size_t)>(dlsym(opened.handle, "memra_cpu_experts_describe"));
    if (!describe) {
        error = requested + " lacks memra_cpu_experts_describe";
        return false;
    }
    lib.path = opened.path;
    lib.backend_dir = opened.directory() + "/" MEMRA_BACKEND_SUBDIR;
    std::string line(describe(nullptr, 0) + 1, '\0');
    describe(line.data(), line.size());
    line.resize(line.size() - 1);
    lib.describe = line;
    return true;
}

// The plugin serving both paths, or "token avx512, rows amx" where they differ.
std::string backend_for(const memra::BackendRegistry &r, int32_t qtype) { return r.served_by(qtype); }

// What the environment changed compared with no MEMRA_CPU_EXPERT_* variable at all.
std::string environment_effect(const memra::BackendRegistry &with_env, const memra::BackendRegistry &without) {
    if (!with_env.usable()) return "the environment makes the library unusable: " + with_env.unusable_reason();
    std::string diff;
    for (const memra_qtype_info &q : memra_qtype_table) {
        const std::string a = backend_for(with_env, q.id), b = backend_for(without, q.id);
        if (a != b) diff += std::string(diff.empty() ? "" : ", ") + q.name + " " + b + " -> " + a;
    }
    return diff.empty() ? "" : "the environment changes the choice: " + diff;
}

// The node's CPUs this process's affinity mask allows (as a calling thread of the engine with the
// same mask would see them).
std::string allowed_cpus(const memra::NumaNode &node) {
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof mask, &mask) != 0) return memra::format_cpu_list(node.cpus);
    std::vector<int32_t> allowed;
    for (int32_t c : node.cpus)
        if (c < CPU_SETSIZE && CPU_ISSET(c, &mask)) allowed.push_back(c);
    return memra::format_cpu_list(allowed);
}

void print_numa_text(const memra::NumaMachine &m) {
    std::printf("\nnuma       %zu node%s (%s): %s\n", m.nodes.size(), m.nodes.size() == 1 ? "" : "s",
                m.fake ? "MEMRA_CPU_EXPERT_NUMA_TOPOLOGY" : "sysfs", memra::numa_action(m).c_str());
    for (const memra::NumaNode &n : m.nodes) {
        const std::string cpus = memra::format_cpu_list(n.cpus), allowed = allowed_cpus(n);
        const std::string mask = allowed == cpus ? "" : " (this process: " + (allowed.empty() ? "none" : allowed) + ")";
        const std::string where = m.fake ? " on node " + std::to_string(n.memory_node) : "";
        std::printf("node %-5d cpus %s%s, memory %llu MiB%s%s\n", n.id, cpus.c_str(), mask.c_str(),
                    static_cast<unsigned long long>(n.memory_bytes >> 20), where.c_str(),
                    n.memory_allowed ? "" : " (not allowed to this process)");
    }
    if (m.memory_policy != 0) std::printf("numa note  %s\n", memra::numa_policy_note(m).c_str());
    if (m.balancing) std::printf("numa note  %s\n", memra::numa_balancing_warning().c_str());
}

memra::tools::Json numa_json(const memra::NumaMachine &m) {
    using memra::tools::Json;
    Json nodes = Json::array();
    for (const memra::NumaNode &n : m.nodes)
        nodes.push_back({{"id", n.id},
                         {"cpus", memra::format_cpu_list(n.cpus)},
                         {"allowed_cpus", allowed_cpus(n)},
                         {"memory_node", n.memory_node},
                         {"memory_bytes", static_cast<int64_t>(n.memory_bytes)},
                         {"memory_allowed", n.memory_allowed}});
    return Json{{"source", m.fake ? "MEMRA_CPU_EXPERT_NUMA_TOPOLOGY" : "sysfs"},
                {"mode", m.numa_on ? "auto" : "off"},
                {"spread", m.enabled},
                {"action", memra::numa_action(m)},
                {"balancing", m.balancing},
                {"memory_policy", static_cast<int64_t>(m.memory_policy)},
                {"nodes", nodes}};
}

void print_text(const memra::CpuFeatures &cpu, const memra::BackendRegistry &r, const Library &lib,
                const std::string &effect, const memra::NumaMachine &numa) {
    std::printf("cpu        %s (%s)\n", cpu.model.c_str(), cpu.vendor.c_str());
    std::printf("features   %s\n", memra::cpu_feature_list(cpu.usable).c_str());
    std::printf("os state   ymm %s, zmm %s, amx tiles %s\n", cpu.os_ymm ? "saved" : "NOT saved",
                cpu.os_zmm ? "saved" : "NOT saved", cpu.os_tile ? "granted" : "NOT granted (or no AMX)");
    if (const uint64_t hidden = cpu.usable & ~r.usable_features())
        std::printf("hidden     %s (MEMRA_CPU_EXPERT_DISABLE_FEATURES)\n", memra::cpu_feature_list(hidden).c_str());
    std::printf("library    %s\n", lib.path.c_str());
    std::printf("searched   ");
    for (size_t i = 0; i < r.search_dirs().size(); ++i) std::printf("%s%s", i ? ", " : "", r.search_dirs()[i].c_str());
    std::printf("\n\nplugin     priority  requires                                                      state\n");
    for (const memra::PluginRecord &p : r.plugins())
        std::printf("%-10s %8d  %-61s %s\n", p.manifest.name.c_str(), p.manifest.priority,
                    memra::cpu_feature_list(p.manifest.requires).c_str(),
                    p.loaded ? ("usable  " + p.manifest.module_path).c_str() : p.status.c_str());
    if (!r.usable()) {
        std::printf("\nbackend    none: %s\n", r.unusable_reason().c_str());
    } else {
        std::printf("\nbackend    %s (%s)\n", r.primary()->name,
                    r.settings().backend == "auto" ? "auto" : "forced by MEMRA_CPU_EXPERT_BACKEND");
        // The kernel forms the plugins run (docs/architecture.md, "Kernel tuning"): the process's.
        std::printf("tuning     %s (%s)\n\nformat     served by\n", memra::kernel_tuning_name(memra::process_kernel_tuning()),
                    r.settings().tuning == "auto" ? "auto, from the CPU vendor" : "MEMRA_CPU_EXPERT_TUNING");
        for (const memra_qtype_info &q : memra_qtype_table) {
            const std::string who = backend_for(r, q.id);
            std::printf("%-10s %s%s\n", q.name, who.c_str(),
                        who != r.primary()->name ? "  (fallback: the chosen plugin does not serve it, or not on both paths)" : "");
        }
    }
    print_numa_text(numa);
    if (!effect.empty()) std::printf("\nnote       %s\n", effect.c_str());
    std::printf("\nlibrary says: %s\n", lib.describe.c_str());
}

void print_json(const memra::CpuFeatures &cpu, const memra::BackendRegistry &r, const Library &lib,
                const std::string &effect, const memra::NumaMachine &numa) {
    using memra::tools::Json;
    Json features = Json::array();
    for (int f = 0; f < MEMRA_CPU_FEATURE_COUNT; ++f)
        if (cpu.usable & MEMRA_CPU_BIT(f)) features.push_back(memra::cpu_feature_name(static_cast<memra_cpu_feature>(f)));
    Json j{{"cpu",
            {{"model", cpu.model},
             {"vendor", cpu.vendor},
             {"features", features},
             {"os_ymm", cpu.os_ymm},
             {"os_zmm", cpu.os_zmm},
             {"os_tile", cpu.os_tile}}},
           {"library", lib.path}};
    Json &plugins = j["plugins"] = Json::array();
    for (const memra::PluginRecord &p : r.plugins())
        plugins.push_back({{"name", p.manifest.name},
                           {"manifest", p.manifest.path},
                           {"module", p.manifest.module_path},
                           {"priority", p.manifest.priority},
                           {"requires", memra::cpu_feature_list(p.manifest.requires)},
                           {"usable", p.loaded},
                           {"status", p.status}});
    j["usable"] = r.usable();
    if (r.usable()) {
        j["backend"] = std::string(r.primary()->name);
        j["selection"] = r.settings().backend == "auto" ? "auto" : "forced";
        Json &formats = j["formats"] = Json::object();
        for (const memra_qtype_info &q : memra_qtype_table) formats[q.name] = backend_for(r, q.id);
    } else {
        j["reason"] = r.unusable_reason();
    }
    j["numa"] = numa_json(numa);
    j["environment_effect"] = effect;
    j["library_describe"] = lib.describe;
    std::cout << memra::tools::dump_json(j);
    std::cout << "\n";
}

}  // namespace

int main(int argc, char **argv) {
    po::options_description options(
        "memra-cpu-info: which backend plugin this CPU will use for each weight format\n\n"
        "Examples:\n"
        "  memra-cpu-info\n"
        "  memra-cpu-info --json\n"
        "  MEMRA_CPU_EXPERT_DISABLE_FEATURES=avx512f memra-cpu-info   # as on a CPU without AVX-512\n"
        "  MEMRA_CPU_EXPERT_NUMA_TOPOLOGY='0:0;1:1' memra-cpu-info      # two fake NUMA nodes\n\n"
        "Options");
    options.add_options()("help,h", "show this help")("json", "print JSON instead of a table")(
        "lib", po::value<std::string>(), "library to inspect (default: MEMRA_CPU_EXPERT_LIB, else the one beside this tool)");
    po::variables_map vm;
    try {
        po::store(po::parse_command_line(argc, argv, options), vm);
        po::notify(vm);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "memra-cpu-info: %s (see --help)\n", e.what());
        return 2;
    }
    if (vm.count("help")) {
        std::cout << options << "\n";
        return 0;
    }
    const std::string requested = vm.count("lib") ? vm["lib"].as<std::string>() : memra::tools::default_library_path();
    Library lib;
    std::string error;
    if (!open_library(requested, lib, error)) {
        std::fprintf(stderr, "memra-cpu-info: cannot load %s: %s\n", requested.c_str(), error.c_str());
        return 1;
    }
    const memra::CpuFeatures &cpu = memra::detect_cpu_features();
    const memra::BackendRegistry with_env(memra::read_settings(), cpu, lib.backend_dir);
    const memra::BackendRegistry without_env(memra::Settings{}, cpu, lib.backend_dir);
    const std::string effect = environment_effect(with_env, without_env);
    memra::NumaSources sources;  // as the library reads them (library.cpp)
    sources.fake_topology = with_env.settings().numa_topology;
    sources.numa_on = with_env.settings().numa;
    const memra::NumaMachine numa = memra::read_numa_machine(sources);
    if (vm.count("json"))
        print_json(cpu, with_env, lib, effect, numa);
    else
        print_text(cpu, with_env, lib, effect, numa);
    return with_env.usable() ? 0 : 1;
}
