// memra-fidelity: how far every integer-dot format's kernels lie from exact arithmetic, for the
// dot alone and end to end (measure.h), at realistic and adversarial scales (data.h), for one or
// more plugin directories side by side, e.g. a build in canonical order version 1 and one in
// version 2 (docs/conformance.md, "Fidelity"). Every plugin equals the scalar reference bit for
// bit (memra-conformance), so the scalar plugin speaks for all of them.
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "dispatch/cpu_features.h"
#include "dispatch/plugin_loader.h"
#include "formats.h"
#include "library_path.h"
#include "measure.h"

namespace po = boost::program_options;
using namespace memra;

namespace {

struct PluginSet {
    std::string label;
    std::vector<PluginRecord> plugins;
    const memra_backend_v2 *backend = nullptr;
};

std::vector<std::string> split(const std::string &s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

const memra_kernel_v2 *kernel_of(const memra_backend_v2 &b, int32_t qtype) {
    for (int32_t i = 0; i < b.kernel_count; ++i)
        if (b.kernels[i].qtype == qtype) return &b.kernels[i];
    return nullptr;
}

// The integer-dot formats: every one whose activations are quantized (F32 and BF16 keep their
// orders and have no integer sums).
std::vector<int32_t> integer_formats() {
    std::vector<int32_t> out;
    for (int32_t q : expertkit::all_qtypes()) {
        const int32_t act = expertkit::scalar_kernel(q).act_format;
        if (act == MEMRA_ACT_Q8_0 || act == MEMRA_ACT_Q8_K) out.push_back(q);
    }
    return out;
}

int32_t qtype_by_name(const std::string &name) {
    for (int32_t q : integer_formats())
        if (expertkit::qtype_name(q) == name) return q;
    throw std::invalid_argument("not an integer-dot format: " + name);
}

std::string sci(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2e", v);
    return buf;
}

}  // namespace

int main(int argc, char **argv) try {
    po::options_description opts(
        "memra-fidelity: the error of every integer-dot format's dots against exact arithmetic, per row\n"
        "normalised by the sum of |terms|: the dot alone (against the exact sum of the quantized values)\n"
        "and end to end (against the f32 input), mean and max over the rows, at realistic and\n"
        "adversarial scales, for one or more plugin directories side by side");
    std::string dirs, labels, backend, formats;
    int32_t rows = 0, n = 0;
    uint64_t seed = 0;
    opts.add_options()("help,h", "show this help")(
        "plugins", po::value(&dirs)->default_value(""),
        "plugin directories, comma-separated (default: the one beside the library)")(
        "labels", po::value(&labels)->default_value(""), "a name per directory (default 1, 2, ...)")(
        "backend", po::value(&backend)->default_value("scalar"), "the plugin measured in each directory")(
        "formats", po::value(&formats)->default_value("all"), "integer-dot formats, ggml spelling, or all")(
        "rows", po::value(&rows)->default_value(1000), "rows per format and scale kind")(
        "n", po::value(&n)->default_value(4096), "values per row (a multiple of 256)")(
        "seed", po::value(&seed)->default_value(1), "seed of the data");
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, opts), vm);
    if (vm.count("help")) {
        std::cout << opts << "\nExamples:\n"
                  << "  memra-fidelity --rows 200 --formats q4_0,q4_K\n"
                  << "  memra-fidelity --plugins OLD/lib/memra-cpu-experts/backends,NEW/lib/memra-cpu-experts/backends "
                     "--labels v1,v2\n";
        return 0;
    }
    po::notify(vm);
    if (rows < 1 || n < 256 || n % 256 != 0) throw std::invalid_argument("--rows must be >= 1 and --n a multiple of 256");

    std::vector<std::string> dir_list = split(dirs);
    if (dir_list.empty()) {
        const std::string lib = tools::default_library_path();
        dir_list.push_back(lib.substr(0, lib.find_last_of('/') + 1) + MEMRA_BACKEND_SUBDIR);
    }
    std::vector<std::string> label_list = split(labels);
    std::vector<PluginSet> sets;
    for (size_t i = 0; i < dir_list.size(); ++i) {
        PluginSet s;
        s.label = i < label_list.size() ? label_list[i] : std::to_string(i + 1);
        s.plugins = load_plugins({dir_list[i]}, detect_cpu_features().usable);
        for (const PluginRecord &p : s.plugins)
            if (p.loaded && backend == p.table->name) s.backend = p.table;
        if (!s.backend) throw std::invalid_argument("no usable plugin '" + backend + "' in " + dir_list[i]);
        sets.push_back(std::move(s));
    }
    std::vector<int32_t> qtypes;
    if (formats == "all")
        qtypes = integer_formats();
    else
        for (const std::string &name : split(formats)) qtypes.push_back(qtype_by_name(name));

    std::printf("memra-fidelity: backend %s, %d rows x %d values per format and scale kind, seed %llu\n",
                backend.c_str(), rows, n, static_cast<unsigned long long>(seed));
    for (size_t i = 0; i < sets.size(); ++i) std::printf("  [%s] %s\n", sets[i].label.c_str(), dir_list[i].c_str());
    std::printf("\n%-7s %-11s", "format", "scales");
    for (const PluginSet &s : sets)
        std::printf(" | %-8s %-9s %-9s %-9s %-9s", s.label.c_str(), "dot mean", "dot max", "e2e mean", "e2e max");
    if (sets.size() == 2) std::printf(" | %s/%s dot mean, max; e2e mean, max", sets[1].label.c_str(), sets[0].label.c_str());
    std::printf("\n");
    for (int32_t q : qtypes)
        for (fidelity::Scales scales : {fidelity::Scales::Realistic, fidelity::Scales::Adversarial}) {
            const fidelity::Problem p = fidelity::make_problem(q, rows, n, scales, seed);
            std::printf("%-7s %-11s", expertkit::qtype_name(q).c_str(), fidelity::scales_name(scales).c_str());
            std::vector<fidelity::Fidelity> got;
            for (const PluginSet &s : sets) {
                const memra_kernel_v2 *k = kernel_of(*s.backend, q);
                if (!k || !k->gemv) throw std::invalid_argument(s.label + ": " + backend + " has no token path for " + expertkit::qtype_name(q));
                got.push_back(fidelity::measure(*k, p));
                const fidelity::Fidelity &f = got.back();
                std::printf(" | %-8s %-9s %-9s %-9s %-9s", "", sci(f.dot.mean).c_str(), sci(f.dot.max).c_str(),
                            sci(f.end_to_end.mean).c_str(), sci(f.end_to_end.max).c_str());
            }
            if (got.size() == 2)
                std::printf(" | %.3f, %.3f; %.3f, %.3f", got[1].dot.mean / got[0].dot.mean, got[1].dot.max / got[0].dot.max,
                            got[1].end_to_end.mean / got[0].end_to_end.mean, got[1].end_to_end.max / got[0].end_to_end.max);
            std::printf("\n");
        }
    return 0;
} catch (const std::exception &e) {
    std::fprintf(stderr, "memra-fidelity: %s\n", e.what());
    return 2;
}
