#include "options.h"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "memra/qtypes.h"
#include "memra_backend_rows.h"

namespace po = boost::program_options;

namespace memra::bench {
namespace {

std::vector<std::string> split(const std::string &list, char sep) {
    std::vector<std::string> parts;
    std::string part;
    std::istringstream in(list);
    while (std::getline(in, part, sep)) parts.push_back(part);
    if (parts.empty() || list.back() == sep) parts.push_back("");
    return parts;
}

// "scalar,avx2,...": the backends this build installs (plugins/backends.table), in table order.
std::string all_backends() {
    std::string all;
    for (const memra_backend_row &row : memra_backend_rows)
        if (row.shipped()) all += (all.empty() ? "" : ",") + std::string(row.name);
    return all;
}

std::string lower(std::string s) {
    for (char &c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

int64_t parse_int(const std::string &text, const std::string &what, int64_t lo, int64_t hi) {
    char *end = nullptr;
    errno = 0;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0 || v < lo || v > hi)
        throw std::invalid_argument(what + " '" + text + "' is not an integer in " +
                                    std::to_string(lo) + ".." + std::to_string(hi));
    return v;
}

std::vector<int32_t> parse_int_list(const std::string &list, const std::string &what, int64_t lo,
                                    int64_t hi) {
    std::vector<int32_t> out;
    for (const std::string &p : split(list, ',')) out.push_back(int32_t(parse_int(p, what, lo, hi)));
    return out;
}

std::vector<int32_t> parse_formats(const std::string &list) {
    std::vector<int32_t> out;
    for (const std::string &p : split(list, ',')) {
        if (lower(p) == "all") {
            for (const memra_qtype_info &q : memra_qtype_table) out.push_back(q.id);
            continue;
        }
        const memra_qtype_info *found = nullptr;
        for (const memra_qtype_info &q : memra_qtype_table)
            if (lower(q.name) == lower(p)) found = &q;
        if (!found)
            throw std::invalid_argument("unknown format '" + p + "' (" + std::string(MEMRA_QTYPE_NAMES_SPACED + 1) +
                                        " or all)");
        out.push_back(found->id);
    }
    return out;
}

std::vector<std::string> parse_backends(const std::string &list) {
    std::vector<std::string> out;
    for (const std::string &p : split(list, ',')) {
        const std::string b = lower(p);
        const std::vector<std::string> all = split(all_backends(), ',');
        if (b == "all") {
            out.insert(out.end(), all.begin(), all.end());
            continue;
        }
        if (b != "auto" && std::find(all.begin(), all.end(), b) == all.end())
            throw std::invalid_argument("unknown backend '" + p + "' (auto, " + all_backends() + " or all)");
        out.push_back(b);
    }
    return out;
}

std::vector<Mode> parse_modes(const std::string &list) {
    std::vector<Mode> out;
    for (const std::string &p : split(list, ',')) {
        const std::string m = lower(p);
        if (m == "all") {
            out.insert(out.end(), {Mode::Bandwidth, Mode::Token, Mode::Rows, Mode::File});
        } else if (m == "bandwidth") out.push_back(Mode::Bandwidth);
        else if (m == "token") out.push_back(Mode::Token);
        else if (m == "rows") out.push_back(Mode::Rows);
        else if (m == "file") out.push_back(Mode::File);
        else throw std::invalid_argument("unknown mode '" + p + "' (bandwidth, token, rows, file or all)");
    }
    return out;
}

Shape parse_shape(const std::string &text) {
    const std::vector<std::string> parts = split(text, ',');
    if (parts.size() != 2) throw std::invalid_argument("--shape '" + text + "' is not N_EMBD,N_FF");
    return Shape{int32_t(parse_int(parts[0], "n_embd", 1, 1 << 20)),
                 int32_t(parse_int(parts[1], "n_ff", 1, 1 << 20))};
}

template <class T>
void dedupe(std::vector<T> &v) {
    std::vector<T> seen;
    for (const T &x : v)
        if (std::find(seen.begin(), seen.end(), x) == seen.end()) seen.push_back(x);
    v = seen;
}

const char *kExamples = R"(
Examples:
  memra-bench                                   bandwidth, token and rows paths, every format and plugin
  memra-bench --formats q4_K,q8_0 --backends avx512 --threads 2
  memra-bench --modes file --formats q4_K --backends auto --dir /var/tmp
  memra-bench --shape 2048,768 --experts 8 --stored 128 --json out.json --csv out.csv --plot roofline.svg
  memra-bench --quick --modes all               small sizes, few repetitions (what ctest runs)
  memra-bench --peer ggml --modes token,rows    memra and ggml-cpu side by side on the same weight bytes
)";

}  // namespace

bool BenchOptions::has(Mode m) const { return std::find(modes.begin(), modes.end(), m) != modes.end(); }

const char *mode_name(Mode m) {
    switch (m) {
    case Mode::Bandwidth: return "bandwidth";
    case Mode::Token: return "token";
    case Mode::Rows: return "rows";
    case Mode::File: return "file";
    }
    return "?";
}

std::string format_name(int32_t qtype) {
    const memra_qtype_info *q = memra_qtype_find(qtype);
    return q ? q->name : "qtype" + std::to_string(qtype);
}

uint64_t parse_bytes(const std::string &text) {
    if (text.empty()) throw std::invalid_argument("empty byte count");
    uint64_t mult = 1;
    std::string digits = text;
    switch (std::toupper(static_cast<unsigned char>(text.back()))) {
    case 'K': mult = uint64_t(1) << 10; break;
    case 'M': mult = uint64_t(1) << 20; break;
    case 'G': mult = uint64_t(1) << 30; break;
    default: mult = 0;
    }
    if (mult) digits.pop_back();
    else mult = 1;
    char *end = nullptr;
    errno = 0;
    const double v = std::strtod(digits.c_str(), &end);
    if (digits.empty() || *end != '\0' || errno != 0 || !(v > 0) || v * double(mult) > 1e15)
        throw std::invalid_argument("byte count '" + text + "' is not a positive number with an optional K/M/G suffix");
    return uint64_t(v * double(mult));
}

ParseOutcome parse_options(const std::vector<std::string> &args) {
    ParseOutcome out;
    BenchOptions &o = out.options;
    std::string formats = "all", backends = all_backends(), threads = "1,2", rows = "1,4,8,32,64";
    std::string modes = "bandwidth,token,rows", shape = "4096,1536";
    std::string max_stored = "3G", bandwidth_bytes = "2G", pread_bytes = "1G";
    po::options_description opts(
        "memra-bench: weight bytes per second of libmemra-cpu-experts (through its public ABI) "
        "next to this machine's measured read bandwidth");
    opts.add_options()
        ("help,h", "show this help")
        ("modes", po::value(&modes), "bandwidth,token,rows,file or all (default bandwidth,token,rows; file writes GiBs to --dir)")
        ("formats", po::value(&formats), "weight formats, ggml spelling, or all (default all)")
        ("backends", po::value(&backends), ("plugins (MEMRA_CPU_EXPERT_BACKEND values), or all (default " + all_backends() + ")").c_str())
        ("threads", po::value(&threads), "OpenMP threads per call (default 1,2)")
        ("shape", po::value(&shape), "N_EMBD,N_FF of one expert (default 4096,1536: a Qwen3-30B-A3B-like layer)")
        ("experts", po::value(&o.experts), "experts per token call (default 8)")
        ("stored", po::value(&o.stored), "distinct stored experts the calls rotate through, so weights come from DRAM (default 128)")
        ("max-stored-bytes", po::value(&max_stored), "cap on the stored experts' bytes; lowers --stored for wide formats (default 3G)")
        ("rows", po::value(&rows), "row counts of the rows path (1..64, default 1,4,8,32,64)")
        ("bandwidth-bytes", po::value(&bandwidth_bytes), "buffer of the read-bandwidth test, >> LLC (default 2G)")
        ("pread-bytes", po::value(&pread_bytes), "file of the pread test (default 1G)")
        ("dir", po::value(&o.dir), "directory for test files, on a real disk (default $TMPDIR, else /var/tmp)")
        ("no-hugepages", "weights and bandwidth buffer without MADV_HUGEPAGE")
        ("min-reps", po::value(&o.min_reps), "repetitions at least (default 10); then until the median settles")
        ("max-seconds", po::value(&o.max_seconds), "time cap per measurement, seconds (default 3)")
        ("quick", "small sizes and few repetitions (for ctest); explicit options still win")
        ("seed", po::value(&o.seed), "seed of the synthetic weights (default 1)")
        ("lib", po::value(&o.lib), "library to dlopen (default: $MEMRA_CPU_EXPERT_LIB, else beside this program)")
        ("json", po::value(&o.json_path), "write all results as JSON to FILE")
        ("csv", po::value(&o.csv_path), "write all results as CSV to FILE")
        ("plot", po::value(&o.svg_path), "write the roofline (bandwidth ceiling vs achieved GB/s) as SVG to FILE")
        ("peer", po::value(&o.peer), "ggml: also run ggml-cpu on the same weight bytes, reps alternating (token: "
                                     "--experts experts; rows: 32 rows on one expert); outputs compared. Backends "
                                     "default to auto; the bandwidth is always measured. Needs "
                                     "tools/bench/peer/fetch-ggml-peer before configuring")
        ("peer-lib", po::value(&o.peer_lib), "the peer module to load (default ../lib/memra-bench-ggml-peer.so from this program)");
    po::options_description hidden;
    hidden.add_options()
        ("internal-child-fd", po::value(&o.child_fd))
        ("internal-backend", po::value(&o.child_backend));
    po::options_description all;
    all.add(opts).add(hidden);
    std::ostringstream help;
    help << opts << kExamples;
    out.help_text = help.str();

    try {
        po::variables_map vm;
        std::vector<std::string> argv(args);
        // No positional arguments: a stray word is an error, not silently ignored.
        const po::positional_options_description none;
        po::store(po::command_line_parser(argv).options(all).positional(none).run(), vm);
        po::notify(vm);
        if (vm.count("help")) {
            out.help = true;
            out.ok = true;
            return out;
        }
        o.quick = vm.count("quick") != 0;
        o.hugepages = vm.count("no-hugepages") == 0;
        if (o.quick) {
            // Small enough for ctest on two shared cores; what was given explicitly still wins.
            if (!vm.count("shape")) shape = "512,256";
            if (!vm.count("stored")) o.stored = 16;
            if (!vm.count("bandwidth-bytes")) bandwidth_bytes = "64M";
            if (!vm.count("pread-bytes")) pread_bytes = "16M";
            if (!vm.count("min-reps")) o.min_reps = 3;
            if (!vm.count("max-seconds")) o.max_seconds = 0.2;
        }
        if (!o.peer.empty() && lower(o.peer) != "ggml")
            throw std::invalid_argument("unknown peer '" + o.peer + "' (ggml)");
        o.peer = lower(o.peer);
        // The peer runs in each measured backend's child: by default only the best one.
        if (!o.peer.empty() && !vm.count("backends")) backends = "auto";
        o.modes = parse_modes(modes);
        o.formats = parse_formats(formats);
        o.backends = parse_backends(backends);
        o.threads = parse_int_list(threads, "thread count", 1, 256);
        o.rows = parse_int_list(rows, "row count", 1, 64);
        o.shape = parse_shape(shape);
        o.max_stored_bytes = parse_bytes(max_stored);
        o.bandwidth_bytes = parse_bytes(bandwidth_bytes);
        o.pread_bytes = parse_bytes(pread_bytes);
        // The peer's GB/s are reported as fractions of the read bandwidth of the same run.
        if (!o.peer.empty()) o.modes.push_back(Mode::Bandwidth);
        dedupe(o.modes);
        dedupe(o.formats);
        dedupe(o.backends);
        dedupe(o.threads);
        dedupe(o.rows);
        if (o.experts < 1 || o.experts > 4096)
            throw std::invalid_argument("--experts " + std::to_string(o.experts) + " is not in 1..4096");
        if (o.stored < o.experts)
            throw std::invalid_argument("--stored " + std::to_string(o.stored) + " is below --experts " +
                                        std::to_string(o.experts));
        if (o.min_reps < 1) throw std::invalid_argument("--min-reps must be at least 1");
        if (!(o.max_seconds > 0)) throw std::invalid_argument("--max-seconds must be positive");
        for (int32_t q : o.formats) {
            const memra_qtype_info *info = memra_qtype_find(q);
            for (int32_t n : {o.shape.n_embd, o.shape.n_ff})
                if (n % info->block_elems != 0)
                    throw std::invalid_argument("--shape " + shape + ": " + std::to_string(n) +
                                                " is not a multiple of " + info->name + "'s block of " +
                                                std::to_string(info->block_elems));
        }
        if (o.dir.empty()) {
            const char *tmp = std::getenv("TMPDIR");
            o.dir = (tmp && *tmp) ? tmp : "/var/tmp";
        }
    } catch (const std::exception &e) {
        out.error = e.what();
        return out;
    }
    out.ok = true;
    return out;
}

}  // namespace memra::bench
