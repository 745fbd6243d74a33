#include "report.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <thread>

#include "json.h"
#include "peer_compare.h"

namespace memra::bench {
namespace {

std::string fmt(const char *format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

std::string percent(double ratio) { return ratio >= 0 ? fmt("%.0f%%", 100 * ratio) : "-"; }

// The record of that mode, variant, format and thread count (and row count, when rows >= 0).
const Record *find(const std::vector<Record> &records, const std::string &mode, const std::string &variant,
                   const std::string &format, int32_t threads, int32_t rows = -1) {
    for (const Record &r : records)
        if (r.mode == mode && r.variant == variant && r.format == format && r.threads == threads &&
            (rows < 0 || r.rows == rows))
            return &r;
    return nullptr;
}

uint64_t read_llc_bytes() {
    const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (l3 > 0) return uint64_t(l3);
    std::ifstream f("/sys/devices/system/cpu/cpu0/cache/index3/size");
    uint64_t kib = 0;
    if (f >> kib) return kib * 1024;
    return 0;
}

// "1s 40.10, 1s-pf 41.02, ...": each read loop's GB/s, named without the load width they share.
std::string loop_list(const Record &r) {
    std::string out;
    for (const auto &[name, gbps] : r.read_loops) {
        const std::string n = name.substr(name.find('-') + 1);
        out += (out.empty() ? "" : ", ") + n + " " + fmt("%.2f", gbps);
    }
    return out;
}

void print_bandwidth(std::ostream &out, const Report &rep) {
    if (rep.bandwidth.empty()) {
        out << "read bandwidth: not measured (--modes without bandwidth): no ratios\n\n";
        return;
    }
    out << "read bandwidth (pre-faulted buffer, median [p10-p90]; memory: the best of the " << rep.read_loop
        << " read loops, 1s/2s: streams per thread, pf: software prefetch):\n";
    for (const Record &r : rep.bandwidth) {
        const char *what = r.variant == "read"       ? "memory, huge pages"
                           : r.variant == "read_4k"  ? "memory, 4 KiB pages"
                           : r.variant == "read_end" ? "memory, after calls"
                                                     : "pread, cold";
        char line[200];
        std::snprintf(line, sizeof line, "  %-20s %4.0f MiB  %d thread%s  %7.2f GB/s [%.2f-%.2f]  (%d reps)\n", what,
                      double(r.bytes) / double(1 << 20), r.threads, r.threads == 1 ? " " : "s", r.gbps(),
                      r.gbps_low(), r.gbps_high(), r.seconds.reps);
        out << line;
        if (!r.read_loop.empty()) out << "    best " << r.read_loop << " of " << loop_list(r) << '\n';
    }
    out << '\n';
}

void print_token(std::ostream &out, const Report &rep) {
    const BenchOptions &o = rep.options;
    out << "token path: memra_cpu_moe_token_v2, " << o.experts << " experts per call, shape n_embd "
        << o.shape.n_embd << " n_ff " << o.shape.n_ff << ", weight bytes per second\n";
    char line[256];
    std::snprintf(line, sizeof line, "  %-7s %-8s %-9s %3s %8s %15s %6s %7s %4s %5s %7s\n", "format", "backend",
                  "served-by", "thr", "GB/s", "p10-p90", "%bw", "target", "met", "reps", "stored");
    out << line;
    for (const BackendResult &b : rep.backends)
        for (const Record &r : b.records) {
            if (r.mode != "token") continue;
            const double target = r.threads == 2 ? bandwidth_target(r.format) : -1;
            const double ratio = r.ratio_to_bandwidth();
            const char *met = target < 0 || ratio < 0 ? "" : ratio >= target ? "yes" : "NO";
            std::snprintf(line, sizeof line, "  %-7s %-8s %-9s %3d %8.2f %15s %6s %7s %4s %5d %7s\n", r.format.c_str(),
                          r.backend.c_str(), r.served_by.c_str(), r.threads, r.gbps(),
                          (fmt("%.2f", r.gbps_low()) + "-" + fmt("%.2f", r.gbps_high())).c_str(),
                          percent(ratio).c_str(), target < 0 ? "-" : percent(target).c_str(), met, r.seconds.reps,
                          std::to_string(r.stored).c_str());
            out << line;
        }
    out << '\n';
}

void print_rows(std::ostream &out, const Report &rep) {
    const bool amx = rep.machine.amx;
    out << "rows path: memra_cpu_expert_rows_v2 on one expert, time relative to one token call of it "
           "(targets: m=4 <= "
        << rows_target(4, amx) << "x, m=8 <= " << rows_target(8, amx) << "x, m=32 <= " << rows_target(32, amx)
        << "x" << (amx ? ", this CPU has AMX" : ", this CPU has no AMX") << ")\n";
    char line[256];
    std::snprintf(line, sizeof line, "  %-7s %-8s %3s %10s", "format", "backend", "thr", "token ms");
    out << line;
    for (int32_t m : rep.options.rows) {
        std::snprintf(line, sizeof line, "%8s", ("m=" + std::to_string(m)).c_str());
        out << line;
    }
    out << "  met\n";
    for (const BackendResult &b : rep.backends)
        for (const Record &token : b.records) {
            if (token.mode != "rows" || token.variant != "token") continue;
            std::snprintf(line, sizeof line, "  %-7s %-8s %3d %10.3f", token.format.c_str(), b.name.c_str(),
                          token.threads, token.seconds.median * 1e3);
            out << line;
            // "yes" when every measured m with a target meets it; the m that miss are named.
            std::string missed;
            bool judged = false;
            for (int32_t m : rep.options.rows) {
                const Record *r = find(b.records, "rows", "rows", token.format, token.threads, m);
                out << (r ? fmt("%7.2fx", r->relative) : std::string("       -"));
                const double target = rows_target(m, amx);
                if (!r || target < 0) continue;
                judged = true;
                if (r->relative > target) missed += (missed.empty() ? "NO m=" : ",") + std::to_string(m);
            }
            out << "  " << (!judged ? "" : missed.empty() ? "yes" : missed) << '\n';
        }
    out << '\n';
}

// One line of the file table: a case of the library's calls, or a ceiling of the same run it is
// compared with (its GB/s and the case's ratio to it); an empty case name continues the case above.
void file_line(std::ostream &out, const std::string &lead, const char *what, const Record *r, const char *ceiling,
               const Record *c) {
    char line[320];
    const double ratio = r && c && c->gbps() > 0 ? r->gbps() / c->gbps() : -1;
    std::snprintf(line, sizeof line, "  %-21s %-13s %8s   %-26s %8s %7s\n", lead.c_str(), what,
                  *what && r ? fmt("%.2f", r->gbps()).c_str() : "", ceiling, c ? fmt("%.2f", c->gbps()).c_str() : "-",
                  percent(ratio).c_str());
    out << line;
}

void print_file(std::ostream &out, const Report &rep) {
    out << "file path: token calls on file-backed experts (file_fd/file_offset), GB/s of weight bytes, each case "
           "next to the ceilings measured in the same run\n";
    char line[320];
    std::snprintf(line, sizeof line, "  %-21s %-13s %8s   %-26s %8s %7s\n", "format backend thr", "case", "GB/s",
                  "ceiling (same run)", "GB/s", "ratio");
    out << line;
    for (const BackendResult &b : rep.backends) {
        std::vector<std::string> formats;
        for (const Record &r : b.records)
            if (r.mode == "file" && r.variant == "pread") formats.push_back(r.format);
        for (const std::string &f : formats) {
            auto get = [&](const char *variant, int32_t t) { return find(b.records, "file", variant, f, t); };
            const Record *pread = get("pread", 1), *cached = get("pread-cached", 1);
            const Record *touch = get("first-touch", 1), *touch_4k = get("first-touch-4k", 1);
            for (int32_t t : rep.options.threads) {
                const Record *cold = get("cold", t), *first = get("first-pass", t), *warm = get("warm", t),
                             *pref = get("prefetched", t), *memory = get("memory", t);
                const std::string lead = f + " " + b.name + " " + std::to_string(t);
                if (cold) file_line(out, lead, "cold", cold, "pread, page cache dropped", pread);
                if (first) {
                    file_line(out, lead, "first pass", first, "pread, page cache", cached);
                    file_line(out, "", "", first, "first touch, huge pages", touch);
                    file_line(out, "", "", first, "first touch, 4 KiB pages", touch_4k);
                }
                if (warm) {
                    file_line(out, lead, "steady state", warm, "memory path, alternating", memory);
                    file_line(out, "", "", warm, "pread, page cache", cached);
                }
                if (pref && cold && pref->exposed_wait_s >= 0) {
                    std::snprintf(line, sizeof line, "  %-21s %-13s %8.2f   exposed wait %.1f ms against cold's %.1f ms (%s)\n",
                                  lead.c_str(), "prefetched", pref->gbps(), pref->exposed_wait_s * 1e3,
                                  cold->exposed_wait_s * 1e3, percent(pref->relative).c_str());
                    out << line;
                }
            }
            for (const Record *r : {get("cold", rep.options.threads.front()), get("warm", rep.options.threads.front())})
                if (r && !r->note.empty()) out << "    " << f << " " << b.name << " " << r->variant << ": " << r->note << '\n';
        }
    }
    out << "  steady state: calls rotating over every window; all hits when the cache holds them, misses into "
           "recycled chunks when it is smaller (the note counts them); each call followed by one on the same "
           "experts from memory (the memory path, alternating)\n"
           "  targets (issue 18): cold >= 90% of pread; first pass >= 50% of page-cache pread, or >= 80% of the "
           "first touch where that is slower; steady state within 10% of the memory path (all hits) or >= 80% of "
           "page-cache pread (misses)\n\n";
}

std::string error_text(const Record *r, bool exact_silu = false) {
    if (!r || (exact_silu ? r->exact_silu_rel_error : r->output_rel_error) < 0) return "-";
    if (exact_silu ? r->exact_silu_identical : r->output_identical) return "=";
    return fmt("%.1e", exact_silu ? r->exact_silu_rel_error : r->output_rel_error);
}

void print_peer(std::ostream &out, const Report &rep) {
    out << "peer: memra and " << rep.options.peer << "-cpu on the same weight bytes, reps alternating; token: "
        << rep.options.experts << " experts per call, rows: " << kPeerRows
        << " rows on one expert; GB/s of weight bytes and % of the read ceiling; memra/ggml: GB/s ratio to the "
           "faster ggml; err: relative L2 error of the output against memra's (=: bit-identical); exact silu: "
           "ggml's graph with the contract's silu in place of its swiglu\n";
    for (const BackendResult &b : rep.backends)
        if (!b.peer.empty())
            out << "  " << b.peer << " in backend " << b.name << ": "
                << (b.peer_usable ? b.peer_describe : "not measured: " + b.peer_reason) << '\n';
    bool any = false;
    for (const BackendResult &b : rep.backends)
        for (const Record &r : b.records) any = any || r.mode == "peer_token" || r.mode == "peer_rows";
    if (!any) {
        out << '\n';
        return;
    }
    char line[320];
    std::snprintf(line, sizeof line, "  %-5s %-7s %-8s %3s %8s %5s %8s %5s %8s %5s %10s %8s %10s %8s\n", "step",
                  "format", "backend", "thr", "memra", "%bw", "ggml", "%bw", "ggml-rp", "%bw", "memra/ggml",
                  "ggml err", "exact silu", "rp err");
    out << line;
    for (const char *mode : {"peer_token", "peer_rows"})
        for (const BackendResult &b : rep.backends)
            for (const Record &m : b.records) {
                if (m.mode != mode || m.variant != "memra") continue;
                const Record *g = find(b.records, mode, "ggml", m.format, m.threads);
                const Record *rp = find(b.records, mode, "ggml_repack", m.format, m.threads);
                auto gbps = [](const Record *r) { return r ? fmt("%.2f", r->gbps()) : std::string("-"); };
                auto bw = [](const Record *r) { return r ? percent(r->ratio_to_bandwidth()) : std::string("-"); };
                std::snprintf(line, sizeof line, "  %-5s %-7s %-8s %3d %8s %5s %8s %5s %8s %5s %10s %8s %10s %8s\n",
                              m.mode.c_str() + 5, m.format.c_str(), b.name.c_str(), m.threads, gbps(&m).c_str(),
                              bw(&m).c_str(), gbps(g).c_str(), bw(g).c_str(), gbps(rp).c_str(), bw(rp).c_str(),
                              m.relative >= 0 ? fmt("%.2fx", m.relative).c_str() : "-", error_text(g).c_str(),
                              error_text(g, true).c_str(), error_text(rp).c_str());
                out << line;
            }
    out << '\n';
}

}  // namespace

Machine describe_machine() {
    Machine m;
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line))
        if (line.compare(0, 10, "model name") == 0) {
            m.cpu_model = line.substr(line.find(':') + 2);
            break;
        }
    m.logical_cpus = int(std::thread::hardware_concurrency());
    m.llc_bytes = read_llc_bytes();
    cpuinfo.clear();
    cpuinfo.seekg(0);
    while (std::getline(cpuinfo, line))
        if (line.compare(0, 5, "flags") == 0) {
            m.amx = (line + ' ').find(" amx_int8 ") != std::string::npos;
            break;
        }
    return m;
}

double bandwidth_ceiling(const Report &report, int32_t threads) {
    // The best the read loop showed at this thread count: huge or 4 KiB pages, before or after the
    // calls. On a VM the page kind that wins varies from run to run, and the ceiling must not be
    // one the kernels can beat.
    double best = -1;
    for (const char *variant : {"read", "read_4k", "read_end"})
        if (const Record *r = find(report.bandwidth, "bandwidth", variant, "", threads)) best = std::max(best, r->gbps());
    return best;
}

void attach_ceilings(Report &report) {
    for (BackendResult &b : report.backends)
        for (Record &r : b.records) r.bandwidth_gbps = bandwidth_ceiling(report, r.threads);
}

double rows_target(int32_t m, bool amx) {
    if (m == 4) return 1.5;
    if (m == 8) return 2.0;
    if (m == 32) return amx ? 3.0 : 4.0;
    return -1;
}

double bandwidth_target(const std::string &format) {
    if (format == "f32") return -1;
    if (format == "iq3_s") return 0.50;
    return 0.85;
}

std::vector<const Record *> all_records(const Report &report) {
    std::vector<const Record *> out;
    for (const Record &r : report.bandwidth) out.push_back(&r);
    for (const BackendResult &b : report.backends)
        for (const Record &r : b.records) out.push_back(&r);
    return out;
}

void print_tables(std::ostream &out, const Report &rep) {
    const BenchOptions &o = rep.options;
    out << "memra-bench " << rep.date << ": " << rep.machine.cpu_model << ", " << rep.machine.logical_cpus
        << " logical CPUs, LLC " << rep.machine.llc_bytes / (1 << 20) << " MiB"
        << (o.quick ? " (--quick: small sizes, numbers not meaningful)" : "") << "\n\n";
    print_bandwidth(out, rep);
    for (const BackendResult &b : rep.backends) {
        if (!b.usable) out << "backend " << b.name << ": not measured: " << b.reason << '\n';
        for (const std::string &e : b.errors) out << "backend " << b.name << ": FAILED " << e << '\n';
    }
    if (o.has(Mode::Token)) print_token(out, rep);
    if (o.has(Mode::Rows)) print_rows(out, rep);
    if (o.has(Mode::File)) print_file(out, rep);
    if (!o.peer.empty()) print_peer(out, rep);
}

void write_json(std::ostream &out, const Report &rep) {
    const BenchOptions &o = rep.options;
    tools::Json doc{{"tool", "memra-bench"}, {"schema_version", 1}, {"date", rep.date}};
    doc["machine"] = {{"cpu_model", rep.machine.cpu_model},
                      {"logical_cpus", rep.machine.logical_cpus},
                      {"llc_bytes", rep.machine.llc_bytes},
                      {"read_loop", rep.read_loop}};
    tools::Json modes = tools::Json::array(), formats = tools::Json::array();
    for (Mode m : o.modes) modes.push_back(mode_name(m));
    for (int32_t q : o.formats) formats.push_back(format_name(q));
    doc["settings"] = {{"modes", modes},
                       {"formats", formats},
                       {"backends", o.backends},
                       {"threads", o.threads},
                       {"rows", o.rows},
                       {"n_embd", o.shape.n_embd},
                       {"n_ff", o.shape.n_ff},
                       {"experts", o.experts},
                       {"stored", o.stored},
                       {"hugepages", o.hugepages},
                       {"quick", o.quick},
                       {"min_reps", o.min_reps},
                       {"max_seconds", o.max_seconds},
                       {"peer", o.peer}};
    tools::Json &backends = doc["backends"] = tools::Json::array();
    for (const BackendResult &b : rep.backends) {
        tools::Json j{{"name", b.name}, {"usable", b.usable}, {"describe", b.describe}, {"reason", b.reason},
                      {"errors", b.errors}};
        if (!b.peer.empty())
            j["peer"] = {{"name", b.peer},
                         {"usable", b.peer_usable},
                         {"describe", b.peer_describe},
                         {"reason", b.peer_reason},
                         {"avx2_kernels", b.peer_avx2}};
        backends.push_back(std::move(j));
    }
    tools::Json &results = doc["results"] = tools::Json::array();
    for (const Record *r : all_records(rep)) results.push_back(record_json(*r));
    out << tools::dump_json(doc) << '\n';
}

std::string csv_header() {
    return "mode,variant,backend,served_by,format,threads,experts,rows,stored,bytes,median_s,p10_s,p90_s,mad_s,"
           "gbps,gbps_p10,gbps_p90,reps,settled,bandwidth_gbps,ratio_to_bandwidth,relative_to,relative,"
           "exposed_wait_s,note,output_rel_error,output_identical,exact_silu_rel_error,exact_silu_identical,read_loop";
}

void write_csv(std::ostream &out, const Report &rep) {
    out << csv_header() << '\n';
    auto optional = [](double v) { return v >= 0 ? fmt("%.6g", v) : std::string(); };
    for (const Record *r : all_records(rep)) {
        std::string note = r->note;
        for (char &c : note)
            if (c == '"') c = '\'';
        out << r->mode << ',' << r->variant << ',' << r->backend << ',' << r->served_by << ',' << r->format << ','
            << r->threads << ',' << r->experts << ',' << r->rows << ',' << r->stored << ',' << r->bytes << ','
            << fmt("%.6g", r->seconds.median) << ',' << fmt("%.6g", r->seconds.p10) << ','
            << fmt("%.6g", r->seconds.p90) << ',' << fmt("%.6g", r->seconds.mad) << ',' << fmt("%.6g", r->gbps())
            << ',' << fmt("%.6g", r->gbps_low()) << ',' << fmt("%.6g", r->gbps_high()) << ',' << r->seconds.reps
            << ',' << (r->seconds.settled ? "true" : "false") << ',' << optional(r->bandwidth_gbps) << ','
            << optional(r->ratio_to_bandwidth()) << ',' << r->relative_to << ',' << optional(r->relative) << ','
            << optional(r->exposed_wait_s) << ",\"" << note << "\"," << optional(r->output_rel_error) << ','
            << (r->output_rel_error >= 0 ? (r->output_identical ? "true" : "false") : "") << ','
            << optional(r->exact_silu_rel_error) << ','
            << (r->exact_silu_rel_error >= 0 ? (r->exact_silu_identical ? "true" : "false") : "") << ','
            << r->read_loop << '\n';
    }
}

}  // namespace memra::bench
