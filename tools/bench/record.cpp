#include "record.h"

#include <cmath>

namespace memra::bench {
namespace {

const json::Value &typed(const json::Value &v, const std::string &k, json::Value::Type t) {
    const json::Value &m = v.at(k);
    if (!m.is(t))
        throw std::runtime_error("JSON: '" + k + "' is a " + json::type_name(m.type) + ", expected a " +
                                 json::type_name(t));
    return m;
}
double number(const json::Value &v, const std::string &k) {
    return typed(v, k, json::Value::Type::Number).number;
}
std::string text(const json::Value &v, const std::string &k) {
    return typed(v, k, json::Value::Type::String).string;
}

void write_stats(tools::JsonWriter &out, const std::string &key, double median, double p10,
                 double p90) {
    out.key(key).begin_object().field("median", median).field("p10", p10).field("p90", p90).end_object();
}

// JSON has no inf or NaN.
double finite(double v) { return std::isfinite(v) ? v : Record::kNonFinite; }

}  // namespace

void write_record(tools::JsonWriter &out, const Record &r) {
    out.begin_object()
        .field("mode", r.mode)
        .field("variant", r.variant)
        .field("backend", r.backend)
        .field("served_by", r.served_by)
        .field("format", r.format)
        .field("threads", int64_t(r.threads))
        .field("experts", int64_t(r.experts))
        .field("rows", int64_t(r.rows))
        .field("stored", int64_t(r.stored))
        .field("bytes", int64_t(r.bytes));
    out.key("seconds").begin_object()
        .field("median", r.seconds.median)
        .field("p10", r.seconds.p10)
        .field("p90", r.seconds.p90)
        .field("mad", r.seconds.mad)
        .end_object();
    // GB/s p10/p90 are those of the rate: the slow end is the p90 time.
    write_stats(out, "gbps", r.gbps(), r.gbps_low(), r.gbps_high());
    out.field("reps", int64_t(r.seconds.reps)).field("settled", r.seconds.settled).field("note", r.note);
    if (r.bandwidth_gbps > 0)
        out.field("bandwidth_gbps", r.bandwidth_gbps).field("ratio_to_bandwidth", r.ratio_to_bandwidth());
    if (r.relative >= 0) out.field("relative_to", r.relative_to).field("relative", r.relative);
    if (r.exposed_wait_s >= 0) out.field("exposed_wait_s", r.exposed_wait_s);
    if (!(r.output_rel_error < 0))
        out.field("output_rel_error", finite(r.output_rel_error)).field("output_identical", r.output_identical);
    if (!(r.exact_silu_rel_error < 0))
        out.field("exact_silu_rel_error", finite(r.exact_silu_rel_error))
            .field("exact_silu_identical", r.exact_silu_identical);
    out.end_object();
}

Record read_record(const json::Value &v) {
    Record r;
    r.mode = text(v, "mode");
    r.variant = text(v, "variant");
    r.backend = text(v, "backend");
    r.served_by = text(v, "served_by");
    r.format = text(v, "format");
    r.threads = int32_t(number(v, "threads"));
    r.experts = int32_t(number(v, "experts"));
    r.rows = int32_t(number(v, "rows"));
    r.stored = int32_t(number(v, "stored"));
    r.bytes = uint64_t(number(v, "bytes"));
    const json::Value &s = typed(v, "seconds", json::Value::Type::Object);
    r.seconds.median = number(s, "median");
    r.seconds.p10 = number(s, "p10");
    r.seconds.p90 = number(s, "p90");
    r.seconds.mad = number(s, "mad");
    r.seconds.reps = int(number(v, "reps"));
    r.seconds.settled = typed(v, "settled", json::Value::Type::Bool).boolean;
    r.note = text(v, "note");
    if (v.has("bandwidth_gbps")) r.bandwidth_gbps = number(v, "bandwidth_gbps");
    if (v.has("relative")) {
        r.relative_to = text(v, "relative_to");
        r.relative = number(v, "relative");
    }
    if (v.has("exposed_wait_s")) r.exposed_wait_s = number(v, "exposed_wait_s");
    if (v.has("output_rel_error")) {
        r.output_rel_error = number(v, "output_rel_error");
        r.output_identical = typed(v, "output_identical", json::Value::Type::Bool).boolean;
    }
    if (v.has("exact_silu_rel_error")) {
        r.exact_silu_rel_error = number(v, "exact_silu_rel_error");
        r.exact_silu_identical = typed(v, "exact_silu_identical", json::Value::Type::Bool).boolean;
    }
    return r;
}

}  // namespace memra::bench
