#include "output_check.h"

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <limits>
#include <set>
#include <sstream>
#include <vector>

#include "json.h"
#include "peer_compare.h"
#include "record.h"
#include "report.h"

namespace memra::bench {
namespace {

using tools::Json;
using tools::json_kind;

// The kinds of the schema, as json_kind names them.
namespace Type {
constexpr const char *Number = "number", *String = "string", *Bool = "boolean", *Array = "array", *Object = "object";
}

struct Key {
    const char *name;
    const char *kind;
};

// Throws naming the path of the first key missing or of the wrong kind.
void require(const Json &v, const std::string &where, std::initializer_list<Key> keys) {
    for (const Key &k : keys) {
        if (!v.contains(k.name)) throw std::runtime_error(where + ": missing key '" + k.name + "'");
        const Json &m = v.at(k.name);
        if (std::string(json_kind(m)) != k.kind)
            throw std::runtime_error(where + "." + k.name + " is a " + json_kind(m) + ", expected a " + k.kind);
    }
}

void require_elements(const Json &array, const std::string &where, const char *kind) {
    for (const Json &e : array)
        if (std::string(json_kind(e)) != kind)
            throw std::runtime_error(where + " holds a " + std::string(json_kind(e)) + ", expected " + kind + "s");
}

std::vector<std::string> split_csv_line(const std::string &line) {
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (char c : line) {
        if (c == '"') quoted = !quoted;
        else if (c == ',' && !quoted) fields.emplace_back();
        else fields.back() += c;
    }
    return fields;
}

size_t count_elements(const boost::property_tree::ptree &t, const std::string &name) {
    size_t n = 0;
    for (const auto &child : t) n += (child.first == name) + count_elements(child.second, name);
    return n;
}

// A --peer record: a known variant, the comparison fields its variant has, and outputs that meet
// the bench's own agreement rule (peer_compare.h).
void check_peer_record(const Json &r, const Record &rec, bool avx2_kernels) {
    const std::string where = "results[] " + rec.mode + "/" + rec.variant + " " + rec.format + " t=" +
                              std::to_string(rec.threads);
    if (rec.variant != "memra" && rec.variant != "ggml" && rec.variant != "ggml_repack")
        throw std::runtime_error(where + ": unknown variant");
    if (rec.variant == "memra") return;
    require(r, where, {{"output_rel_error", Type::Number}, {"output_identical", Type::Bool},
                       {"relative_to", Type::String}, {"relative", Type::Number}});
    auto agree = [&](PeerCheck check, double rel_error, bool identical) {
        OutputComparison c;
        c.rel_error = rel_error >= Record::kNonFinite ? std::numeric_limits<double>::infinity() : rel_error;
        c.differing = identical ? 0 : 1;
        const std::string problem = agreement_problem(rec.format, rec.mode, check, avx2_kernels, c);
        if (!problem.empty()) throw std::runtime_error(where + ": " + problem);
    };
    if (rec.variant == "ggml_repack") {
        agree(PeerCheck::Repacked, rec.output_rel_error, rec.output_identical);
        return;
    }
    require(r, where, {{"exact_silu_rel_error", Type::Number}, {"exact_silu_identical", Type::Bool}});
    agree(PeerCheck::Shipped, rec.output_rel_error, rec.output_identical);
    agree(PeerCheck::ExactSilu, rec.exact_silu_rel_error, rec.exact_silu_identical);
}

// A memory read record: the loops measured, and its figure the best of them.
void check_read_loops(const Json &r, const Record &rec) {
    const std::string where = "results[] bandwidth/" + rec.variant + " t=" + std::to_string(rec.threads);
    require(r, where, {{"read_loop", Type::String}, {"read_loops", Type::Object}});
    double best = 0;
    for (const auto &[name, gbps] : rec.read_loops) best = std::max(best, gbps);
    if (rec.read_loops.empty() || std::find_if(rec.read_loops.begin(), rec.read_loops.end(), [&](const auto &l) {
                                      return l.first == rec.read_loop;
                                  }) == rec.read_loops.end())
        throw std::runtime_error(where + ": read_loop '" + rec.read_loop + "' is not one of read_loops");
    if (std::fabs(rec.gbps() - best) > 1e-6 * best)
        throw std::runtime_error(where + ": " + std::to_string(rec.gbps()) + " GB/s is not the best loop's " +
                                 std::to_string(best));
}

// A warm file record: compared with the memory-path calls that alternated with it (file/memory
// of the same plugin, format and thread count).
void check_warm(const Json &results, const Record &warm) {
    const std::string where = "results[] file/warm " + warm.format + " t=" + std::to_string(warm.threads);
    for (const Json &r : results) {
        const Record m = read_record(r);
        if (m.mode != "file" || m.variant != "memory" || m.backend != warm.backend || m.format != warm.format ||
            m.threads != warm.threads)
            continue;
        if (warm.relative_to != "memory" || std::fabs(warm.relative - warm.gbps() / m.gbps()) > 1e-6 * warm.relative)
            throw std::runtime_error(where + ": relative is not its GB/s over file/memory's");
        return;
    }
    throw std::runtime_error(where + ": no file/memory record measured alongside");
}

std::string guarded(const std::function<void()> &check) {
    try {
        check();
        return "";
    } catch (const std::exception &e) {
        return e.what();
    }
}

}  // namespace

std::string check_json(const std::string &text, const std::string &expect_modes) {
    return guarded([&] {
        const Json doc = Json::parse(text);
        require(doc, "document", {{"tool", Type::String}, {"schema_version", Type::Number}, {"date", Type::String},
                                  {"machine", Type::Object}, {"settings", Type::Object}, {"backends", Type::Array},
                                  {"results", Type::Array}});
        if (doc.at("tool") != "memra-bench") throw std::runtime_error("document.tool is not memra-bench");
        if (doc.at("schema_version") != 1) throw std::runtime_error("document.schema_version is not 1");
        require(doc.at("machine"), "machine", {{"cpu_model", Type::String}, {"logical_cpus", Type::Number},
                                               {"llc_bytes", Type::Number}, {"read_loop", Type::String}});
        const Json &settings = doc.at("settings");
        require(settings, "settings",
                {{"modes", Type::Array}, {"formats", Type::Array}, {"backends", Type::Array}, {"threads", Type::Array},
                 {"rows", Type::Array}, {"n_embd", Type::Number}, {"n_ff", Type::Number}, {"experts", Type::Number},
                 {"stored", Type::Number}, {"hugepages", Type::Bool}, {"quick", Type::Bool},
                 {"min_reps", Type::Number}, {"max_seconds", Type::Number}, {"peer", Type::String}});
        for (const char *k : {"modes", "formats", "backends"}) require_elements(settings.at(k), std::string("settings.") + k, Type::String);
        for (const char *k : {"threads", "rows"}) require_elements(settings.at(k), std::string("settings.") + k, Type::Number);
        std::map<std::string, bool> avx2_kernels;  // per backend, of its peer
        for (const Json &b : doc.at("backends")) {
            require(b, "backends[]", {{"name", Type::String}, {"usable", Type::Bool}, {"describe", Type::String},
                                      {"reason", Type::String}, {"errors", Type::Array}});
            require_elements(b.at("errors"), "backends[].errors", Type::String);
            // A plugin this CPU runs must measure every format it was asked for; an unusable one
            // is reported with its reason, not failed.
            if (b.at("usable").get<bool>() && !b.at("errors").empty())
                throw std::runtime_error("backend " + b.at("name").get<std::string>() + " is usable but reported errors: " +
                                         b.at("errors").front().get<std::string>());
            if (b.contains("peer")) {
                require(b.at("peer"), "backends[].peer", {{"name", Type::String}, {"usable", Type::Bool},
                                                          {"describe", Type::String}, {"reason", Type::String},
                                                          {"avx2_kernels", Type::Bool}});
                avx2_kernels[b.at("name").get<std::string>()] = b.at("peer").at("avx2_kernels").get<bool>();
            }
        }
        std::set<std::string> modes;
        for (const Json &r : doc.at("results")) {
            require(r, "results[]", {{"gbps", Type::Object}});
            require(r.at("gbps"), "results[].gbps", {{"median", Type::Number}, {"p10", Type::Number}, {"p90", Type::Number}});
            const Record rec = read_record(r);  // every other field, typed
            if (!(rec.seconds.median > 0) || rec.seconds.reps < 1 || rec.bytes == 0)
                throw std::runtime_error("results[] " + rec.mode + "/" + rec.variant + " has no samples");
            if (rec.mode == "bandwidth" && rec.variant != "pread") check_read_loops(r, rec);
            if (rec.mode == "file" && rec.variant == "warm") check_warm(doc.at("results"), rec);
            if (r.contains("bandwidth_gbps") && !r.contains("ratio_to_bandwidth"))
                throw std::runtime_error("results[] " + rec.mode + " has bandwidth_gbps without ratio_to_bandwidth");
            if (rec.mode == "peer_token" || rec.mode == "peer_rows") {
                if (!avx2_kernels.count(rec.backend))
                    throw std::runtime_error("results[] " + rec.mode + " of backend '" + rec.backend +
                                             "', which has no backends[].peer");
                check_peer_record(r, rec, avx2_kernels[rec.backend]);
            }
            modes.insert(rec.mode);
        }
        std::istringstream want(expect_modes);
        std::string m;
        while (std::getline(want, m, ','))
            if (!m.empty() && !modes.count(m)) throw std::runtime_error("no result of mode '" + m + "'");
    });
}

std::string check_csv(const std::string &text) {
    return guarded([&] {
        std::istringstream in(text);
        std::string line;
        if (!std::getline(in, line) || line != csv_header())
            throw std::runtime_error("CSV header is not the documented one: " + line);
        const size_t columns = split_csv_line(line).size();
        int n = 1;
        while (std::getline(in, line)) {
            ++n;
            if (split_csv_line(line).size() != columns)
                throw std::runtime_error("CSV line " + std::to_string(n) + " has " +
                                         std::to_string(split_csv_line(line).size()) + " fields, not " +
                                         std::to_string(columns));
        }
        if (n < 2) throw std::runtime_error("CSV has no rows");
    });
}

std::string check_svg(const std::string &text) {
    return guarded([&] {
        boost::property_tree::ptree tree;
        std::istringstream in(text);
        boost::property_tree::read_xml(in, tree);  // throws on malformed XML
        const auto svg = tree.get_child_optional("svg");
        if (!svg) throw std::runtime_error("SVG root element is not <svg>");
        if (svg->get<std::string>("<xmlattr>.xmlns", "") != "http://www.w3.org/2000/svg")
            throw std::runtime_error("<svg> lacks the SVG namespace");
        for (const char *e : {"line", "rect", "text"})
            if (count_elements(*svg, e) == 0) throw std::runtime_error(std::string("SVG has no <") + e + ">");
    });
}

}  // namespace memra::bench
