#include "checks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "reference.h"
#include "timing.h"

namespace memra::demo {
namespace {

using gguf_tool::WeightSource;

// "avx512" when one plugin serves all three projections, else "avx512/avx2/avx512".
std::string plugins_of(const gguf::MoeLayer &l, const std::map<std::string, std::string> &served) {
    std::string names[3];
    const gguf::TensorInfo *t[3] = {l.gate, l.up, l.down};
    for (int p = 0; p < 3; ++p) {
        const auto it = served.find(gguf::tensor_type_name(t[p]->type));
        names[p] = it == served.end() ? "?" : it->second;
    }
    return names[0] == names[1] && names[1] == names[2] ? names[0] : names[0] + "/" + names[1] + "/" + names[2];
}

// How far over its tolerance a verdict is (> 1 fails); the demo shows each case's worst token.
double badness(const expertkit::Verdict &v) {
    if (!v.finite) return INFINITY;
    return std::max(v.err_exact / v.tol_exact, v.err_quant / v.tol_quant);
}

// Each token of the case against the double references, computed from the same bytes in memory
// (the reference decodes with the scalar kernels linked into the expert kit, not the library).
void judge_case(const gguf::File &file, const Case &c, Row &row) {
    const gguf_tool::LayerExperts experts(file, c.layer, c.selection.experts, c.selection.route_weights, WeightSource::Memory);
    const size_t n = c.layer.n_embd;
    double worst = -1;
    for (size_t t = 0; t < c.inputs.size() / n; ++t) {
        const expertkit::Verdict v =
            expertkit::judge(expertkit::evaluate_token(experts.data(), experts.count(), c.inputs.data() + t * n),
                           c.result.outputs.data() + t * n);
        row.reference_ok = row.reference_ok && v.ok();
        if (badness(v) > worst) {
            worst = badness(v);
            row.reference = v;
        }
    }
}

bool bit_identical(const std::vector<float> &a, const std::vector<float> &b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

bool Report::all_passed() const {
    return !rows.empty() && std::all_of(rows.begin(), rows.end(), [](const Row &r) { return r.ok; });
}

Report check(const gguf::File &file, const std::vector<Case> &cases, const std::vector<float> &scalar,
             const std::string &scalar_failure, const std::map<std::string, std::string> &served) {
    Report report;
    report.scalar_failure = scalar_failure;
    size_t expected = 0;
    for (const Case &c : cases) expected += c.result.outputs.size();
    if (scalar_failure.empty() && scalar.size() != expected)
        report.scalar_failure = "the scalar run returned " + std::to_string(scalar.size()) + " values, not " +
                                std::to_string(expected);
    size_t offset = 0;
    const Case *memory = nullptr;
    for (const Case &c : cases) {
        Row row;
        row.c = &c;
        row.served_by = plugins_of(c.layer, served);
        const gguf_tool::LayerExperts experts(file, c.layer, c.selection.experts, c.selection.route_weights, c.source);
        if (!c.timed_s.empty()) {
            row.median_us = gguf_tool::percentile(c.timed_s, 0.5) * 1e6;
            row.gbps = double(experts.weight_bytes()) / (row.median_us * 1e-6) / 1e9;
        }
        const size_t n = c.result.outputs.size();
        if (report.scalar_failure.empty()) {
            const std::vector<float> mine(scalar.begin() + int64_t(offset), scalar.begin() + int64_t(offset + n));
            row.scalar = gguf_tool::compare_with_scalar(c.result.outputs, mine, c.layer.n_embd);
            row.scalar_done = true;
        }
        offset += n;
        if (c.result.failure.empty()) judge_case(file, c, row);
        if (c.source == WeightSource::Memory) {
            memory = &c;
        } else {
            row.file_equals_memory = memory && memory->layer.layer == c.layer.layer && memory->rows == c.rows &&
                                     bit_identical(memory->result.outputs, c.result.outputs);
            report.file_hits += c.result.cache[0];
            report.file_misses += c.result.cache[1];
            report.file_read_bytes += c.result.cache[2];
        }
        row.ok = c.result.failure.empty() && row.scalar_done && row.scalar.pass() && row.reference_ok &&
                 row.file_equals_memory;
        report.rows.push_back(std::move(row));
    }
    return report;
}

void print(const Report &report) {
    std::printf("%-5s %-6s %-6s %-6s %-14s %-7s %-6s %9s %7s  %-14s %-19s %-19s %s\n", "layer", "gate", "up", "down",
                "served by", "call", "source", "us/call", "GB/s", "vs scalar", "vs exact (tol)", "vs ggml (tol)", "ok");
    auto type = [](const gguf::TensorInfo *t) { return gguf::tensor_type_name(t->type); };
    for (const Row &r : report.rows) {
        const Case &c = *r.c;
        const std::string call = c.rows ? "rows " + std::to_string(std::min<size_t>(size_t(c.rows), c.inputs.size() / c.layer.n_embd)) : "token";
        std::printf("%-5d %-6s %-6s %-6s %-14s %-7s %-6s ", c.layer.layer, type(c.layer.gate).c_str(), type(c.layer.up).c_str(),
                    type(c.layer.down).c_str(), r.served_by.c_str(), call.c_str(), source_name(c.source));
        if (!c.result.failure.empty()) {
            std::printf("call failed: %s\n", c.result.failure.c_str());
            continue;
        }
        char scalar[32] = "not run";
        if (r.scalar_done) {
            if (r.scalar.identical)
                std::snprintf(scalar, sizeof scalar, "bit-identical");
            else
                std::snprintf(scalar, sizeof scalar, "%.2e", r.scalar.max_rel_l2);
        }
        const expertkit::Verdict &v = r.reference;
        std::printf("%9.1f %7.2f  %-14s %.2e (%.2e)  %.2e (%.2e)  %s%s\n", r.median_us, r.gbps, scalar, v.err_exact,
                    v.tol_exact, v.err_quant, v.tol_quant, r.ok ? "ok" : "FAIL",
                    r.file_equals_memory ? "" : " (file differs from memory)");
    }
    if (!report.scalar_failure.empty()) std::printf("\nscalar check FAILED: %s\n", report.scalar_failure.c_str());
    std::printf("\nfile source: cache hits %llu, misses %llu, %llu bytes read\n", (unsigned long long)report.file_hits,
                (unsigned long long)report.file_misses, (unsigned long long)report.file_read_bytes);
    std::printf(
        "vs scalar: the same tokens on MEMRA_CPU_EXPERT_BACKEND=scalar (bit-identical required; otherwise the max\n"
        "           relative L2 difference is shown, and fails); vs exact: relative L2 error against the dequantized weights applied in double\n"
        "           to the f32 input; vs ggml: against the same with activations rounded as ggml does (only the\n"
        "           float order differs); each the worst token, tolerances derived in tools/expertkit/accuracy.h.\n"
        "           The file source must equal the memory source bit for bit. us/call: after the checks, the\n"
        "           median of %d calls of the same experts, after %d warm-up calls: a token call, or one batch (a\n"
        "           rows call per expert); GB/s: the weights one call reads / that median.\n",
        kTimedCalls, kWarmupCalls);
}

}  // namespace memra::demo
