#include "record.h"

#include <cmath>

namespace memra::bench {
namespace {

using tools::Json;
using tools::json_bool;
using tools::json_member;
using tools::json_number;
using tools::json_string;

Json stats(double median, double p10, double p90) { return Json{{"median", median}, {"p10", p10}, {"p90", p90}}; }

// JSON has no inf or NaN.
double finite(double v) { return std::isfinite(v) ? v : Record::kNonFinite; }

}  // namespace

Json record_json(const Record &r) {
    Json j{{"mode", r.mode},          {"variant", r.variant}, {"backend", r.backend},
           {"served_by", r.served_by}, {"format", r.format},   {"threads", r.threads},
           {"experts", r.experts},     {"rows", r.rows},       {"stored", r.stored},
           {"bytes", r.bytes}};
    j["seconds"] = stats(r.seconds.median, r.seconds.p10, r.seconds.p90);
    j["seconds"]["mad"] = r.seconds.mad;
    // GB/s p10/p90 are those of the rate: the slow end is the p90 time.
    j["gbps"] = stats(r.gbps(), r.gbps_low(), r.gbps_high());
    j["reps"] = r.seconds.reps;
    j["settled"] = r.seconds.settled;
    j["note"] = r.note;
    if (r.bandwidth_gbps > 0) {
        j["bandwidth_gbps"] = r.bandwidth_gbps;
        j["ratio_to_bandwidth"] = r.ratio_to_bandwidth();
    }
    if (r.relative >= 0) {
        j["relative_to"] = r.relative_to;
        j["relative"] = r.relative;
    }
    if (r.exposed_wait_s >= 0) j["exposed_wait_s"] = r.exposed_wait_s;
    if (!(r.output_rel_error < 0)) {
        j["output_rel_error"] = finite(r.output_rel_error);
        j["output_identical"] = r.output_identical;
    }
    if (!(r.exact_silu_rel_error < 0)) {
        j["exact_silu_rel_error"] = finite(r.exact_silu_rel_error);
        j["exact_silu_identical"] = r.exact_silu_identical;
    }
    if (!r.read_loop.empty()) {
        j["read_loop"] = r.read_loop;
        Json &loops = j["read_loops"] = Json::object();
        for (const auto &[name, gbps] : r.read_loops) loops[name] = gbps;
    }
    return j;
}

Record read_record(const Json &v) {
    Record r;
    r.mode = json_string(v, "mode");
    r.variant = json_string(v, "variant");
    r.backend = json_string(v, "backend");
    r.served_by = json_string(v, "served_by");
    r.format = json_string(v, "format");
    r.threads = int32_t(json_number(v, "threads"));
    r.experts = int32_t(json_number(v, "experts"));
    r.rows = int32_t(json_number(v, "rows"));
    r.stored = int32_t(json_number(v, "stored"));
    r.bytes = json_member(v, "bytes", "number").get<uint64_t>();
    const Json &s = json_member(v, "seconds", "object");
    r.seconds.median = json_number(s, "median");
    r.seconds.p10 = json_number(s, "p10");
    r.seconds.p90 = json_number(s, "p90");
    r.seconds.mad = json_number(s, "mad");
    r.seconds.reps = int(json_number(v, "reps"));
    r.seconds.settled = json_bool(v, "settled");
    r.note = json_string(v, "note");
    if (v.contains("bandwidth_gbps")) r.bandwidth_gbps = json_number(v, "bandwidth_gbps");
    if (v.contains("relative")) {
        r.relative_to = json_string(v, "relative_to");
        r.relative = json_number(v, "relative");
    }
    if (v.contains("exposed_wait_s")) r.exposed_wait_s = json_number(v, "exposed_wait_s");
    if (v.contains("output_rel_error")) {
        r.output_rel_error = json_number(v, "output_rel_error");
        r.output_identical = json_bool(v, "output_identical");
    }
    if (v.contains("exact_silu_rel_error")) {
        r.exact_silu_rel_error = json_number(v, "exact_silu_rel_error");
        r.exact_silu_identical = json_bool(v, "exact_silu_identical");
    }
    if (v.contains("read_loop")) {
        r.read_loop = json_string(v, "read_loop");
        const Json &loops = json_member(v, "read_loops", "object");
        for (const auto &loop : loops.items()) r.read_loops.emplace_back(loop.key(), json_number(loops, loop.key()));
    }
    return r;
}

}  // namespace memra::bench
