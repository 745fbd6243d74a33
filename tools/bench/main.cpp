// memra-bench: how close libmemra-cpu-experts comes to this machine's memory bandwidth. It
// measures the read bandwidth and cold pread throughput itself, then, per plugin (one child
// process each, see child.h), the token, rows and file paths through the public ABI, and prints
// GB/s of weight bytes next to the bandwidth; --json, --csv and --plot keep the results.
// docs/benchmarks.md explains the method, the output schema and the latest measured table.
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>

#include "bandwidth.h"
#include "child.h"
#include "options.h"
#include "read_loop.h"
#include "report.h"
#include "svg_plot.h"
#include "test_file.h"

using namespace memra::bench;

namespace {

std::string utc_now() {
    const std::time_t now = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    return buf;
}

Record bandwidth_record(const char *variant, int32_t threads, uint64_t bytes, const Summary &s, std::string note) {
    Record r;
    r.mode = "bandwidth";
    r.variant = variant;
    r.threads = threads;
    r.bytes = bytes;
    r.seconds = s;
    r.note = std::move(note);
    return r;
}

void progress(const Record &r) {
    std::fprintf(stderr, "memra-bench: bandwidth %-7s t=%d %8.2f GB/s  (%d reps%s%s)\n", r.variant.c_str(), r.threads,
                 r.gbps(), r.seconds.reps, r.read_loop.empty() ? "" : ", best loop ", r.read_loop.c_str());
}

StopRule ceiling_rule(const BenchOptions &o) {
    StopRule rule;
    rule.min_reps = o.min_reps;
    rule.max_seconds = o.max_seconds;
    return rule;
}

// Read bandwidth at every thread count, on huge or on 4 KiB pages: the best of the read loops.
void measure_read(const BenchOptions &o, bool huge, const char *variant, std::vector<Record> &out) {
    const PageBuffer buffer(o.bandwidth_bytes / 4096 * 4096, huge);
    for (int32_t t : o.threads) {
        const ReadCeiling c = measure_read_bandwidth(buffer, t, ceiling_rule(o));
        Record r = bandwidth_record(variant, t, buffer.size(), c.seconds, huge ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE");
        r.read_loop = c.loop;
        for (const auto &[name, seconds] : c.loop_medians)
            r.read_loops.emplace_back(name, seconds > 0 ? double(buffer.size()) / seconds / 1e9 : 0);
        progress(r);
        out.push_back(std::move(r));
    }
}

std::vector<Record> measure_ceilings(const BenchOptions &o) {
    const StopRule rule = ceiling_rule(o);
    std::vector<Record> out;
    // The page kind of the weights first: the ceiling they are compared with.
    measure_read(o, o.hugepages, o.hugepages ? "read" : "read_4k", out);
    measure_read(o, !o.hugepages, o.hugepages ? "read_4k" : "read", out);
    const PageBuffer content(o.pread_bytes, false);
    const TestFile file(o.dir, "pread", content.data(), content.size());
    const size_t request = std::min<size_t>(size_t(16) << 20, content.size());
    out.push_back(bandwidth_record("pread", 1, content.size(), measure_cold_pread(file.path(), file.size(), request, rule),
                                   std::to_string(request >> 20) + " MiB requests, " + file.path() +
                                       (file.droppable() ? "" : " (tmpfs: not cold)")));
    progress(out.back());
    return out;
}

// Opens an output file now, so that a bad path fails before minutes of measuring.
std::unique_ptr<std::ofstream> open_output(const std::string &path, const char *option) {
    if (path.empty()) return nullptr;
    auto f = std::make_unique<std::ofstream>(path);
    if (!*f) throw std::runtime_error(std::string(option) + " " + path + ": cannot write");
    return f;
}

}  // namespace

int main(int argc, char **argv) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    const ParseOutcome parsed = parse_options(args);
    if (!parsed.ok) {
        std::fprintf(stderr, "memra-bench: %s (see --help)\n", parsed.error.c_str());
        return 2;
    }
    if (parsed.help) {
        std::cout << parsed.help_text;
        return 0;
    }
    const BenchOptions &o = parsed.options;
    if (o.child_fd >= 0) return child_main(o);

    try {
        const auto json = open_output(o.json_path, "--json");
        const auto csv = open_output(o.csv_path, "--csv");
        const auto svg = open_output(o.svg_path, "--plot");
        Report rep;
        rep.date = utc_now();
        rep.machine = describe_machine();
        rep.read_loop = read_loop_width();
        rep.options = o;
        const bool calls = o.has(Mode::Token) || o.has(Mode::Rows) || o.has(Mode::File);
        if (o.has(Mode::Bandwidth)) rep.bandwidth = measure_ceilings(o);
        if (calls)
            for (const std::string &b : o.backends) rep.backends.push_back(run_backend_child(args, b));
        // Once more after the calls: on a shared machine the load can change during a run, and
        // the ceiling is the higher of the two (ratios are then never flattered by a busy start).
        if (o.has(Mode::Bandwidth) && calls) measure_read(o, o.hugepages, "read_end", rep.bandwidth);
        attach_ceilings(rep);
        print_tables(std::cout, rep);
        if (json) write_json(*json, rep);
        if (csv) write_csv(*csv, rep);
        if (svg) *svg << roofline_svg(rep);
        for (auto *f : {json.get(), csv.get(), svg.get()})
            if (f && !f->flush()) throw std::runtime_error("writing an output file failed");
        bool failed = false;
        for (const BackendResult &b : rep.backends) failed = failed || !b.errors.empty();
        return failed ? 1 : 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "memra-bench: %s\n", e.what());
        return 1;
    }
}
