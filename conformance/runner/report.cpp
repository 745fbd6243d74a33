#include "report.h"

#include <algorithm>
#include <iomanip>

#include "dispatch/tuning.h"
#include "formats.h"
#include "json.h"

namespace memra::conformance {
namespace {

const char *const kTestBuildNote =
    "* test build: avxvnni-emulated, the AVX-VNNI kernels with vpdpbusd emulated exactly on AVX2\n"
    "  (plugins/avxvnni_emulated); amx-emulated, the AMX rows-path kernels with the tiles emulated in\n"
    "  AVX-512 (plugins/amx_emulated); loaded from a directory the library never searches, not shipped.";

const char *verdict_word(Verdict v) {
    switch (v) {
    case Verdict::Pass: return "pass";
    case Verdict::Fail: return "FAIL";
    default: return "skip";
    }
}

const char *verdict_json(Verdict v) {
    switch (v) {
    case Verdict::Pass: return "pass";
    case Verdict::Fail: return "fail";
    default: return "skip";
    }
}

std::string shown_name(const Backend &b) { return b.label + (b.test_build ? "*" : ""); }

bool any_test_build(const BackendSet &set) {
    return std::any_of(set.subjects().begin(), set.subjects().end(), [](const Backend &b) { return b.test_build; });
}

std::string scope_name(Scope s) { return s == Scope::Full ? "full" : "default"; }

tools::Json backend_fields(const Backend &b) {
    return {{"name", b.label},         {"test_build", b.test_build}, {"requires", b.requires},
            {"module", b.module},      {"runnable", b.runnable()},   {"skip_reason", b.skip_reason}};
}

void context_fields(tools::Json &j, const RunContext &ctx) {
    j["cpu"] = {{"model", ctx.cpu->model}, {"features", cpu_feature_list(ctx.backends->usable_features())}};
    j["searched"] = ctx.backends->searched();
    if (const Backend *ref = ctx.backends->reference()) j["reference"] = {{"name", ref->label}, {"module", ref->module}};
}

// The CPU, what it can run, and where plugins were looked for.
void print_machine(std::ostream &out, const RunContext &ctx) {
    const BackendSet &set = *ctx.backends;
    out << "cpu       " << ctx.cpu->model << "\nfeatures  " << cpu_feature_list(set.usable_features()) << "\n";
    if (const uint64_t hidden = ctx.cpu->usable & ~set.usable_features())
        out << "hidden    " << cpu_feature_list(hidden) << " (MEMRA_CPU_EXPERT_DISABLE_FEATURES)\n";
    // Which vendor's kernel forms the plugins run (the same bits under every tuning).
    out << "tuning    " << kernel_tuning_name(process_kernel_tuning()) << "\n";
    out << "searched  ";
    for (size_t i = 0; i < set.searched().size(); ++i) out << (i ? ", " : "") << set.searched()[i];
    out << "\n";
}

}  // namespace

void print_backend_list(std::ostream &out, const RunContext &ctx) {
    const BackendSet &set = *ctx.backends;
    print_machine(out, ctx);
    out << "\n";
    int requires_width = int(std::string("requires").size());
    for (const Backend &b : set.subjects()) requires_width = std::max(requires_width, int(b.requires.size()));
    requires_width += 2;
    out << std::left << std::setw(20) << "backend" << std::setw(requires_width) << "requires" << "state\n";
    if (const Backend *ref = set.reference())
        out << std::setw(20) << "scalar (reference)" << std::setw(requires_width) << ref->requires << "runs here  "
            << ref->module << "\n";
    for (const Backend &b : set.subjects())
        out << std::setw(20) << shown_name(b) << std::setw(requires_width) << b.requires
            << (b.runnable() ? "runs here  " + b.module : "skipped: " + b.skip_reason) << "\n";
    if (any_test_build(set)) out << "\n" << kTestBuildNote << "\n";
    if (!set.problem().empty()) out << "\nproblem   " << set.problem() << "\n";
}

void print_backend_list_json(std::ostream &out, const RunContext &ctx) {
    tools::Json j = tools::Json::object();
    context_fields(j, ctx);
    tools::Json &backends = j["backends"] = tools::Json::array();
    for (const Backend &b : ctx.backends->subjects()) backends.push_back(backend_fields(b));
    j["problem"] = ctx.backends->problem();
    out << tools::dump_json(j) << "\n";
}

void print_table(std::ostream &out, const RunContext &ctx, const Report &report) {
    out << "memra-conformance: each backend against the scalar plugin, bit for bit (seed " << ctx.seed << ", "
        << ctx.iterations << (ctx.iterations == 1 ? " iteration" : " iterations") << ", " << scope_name(ctx.scope)
        << " shapes)\n";
    print_machine(out, ctx);
    out << "reference " << ctx.backends->reference()->module << "\n\n";
    std::vector<size_t> width;
    out << std::left << std::setw(10) << "format";
    // Columns as wide as their names; the last one unpadded.
    for (size_t b = 0; b < report.results.size(); ++b) {
        const std::string name = shown_name(*report.results[b].backend);
        width.push_back(b + 1 < report.results.size() ? std::max<size_t>(6, name.size() + 2) : 0);
        out << std::setw(int(width.back())) << name;
    }
    out << "\n";
    for (size_t q = 0; q < report.qtypes.size(); ++q) {
        out << std::setw(10) << expertkit::qtype_name(report.qtypes[q]);
        for (size_t b = 0; b < report.results.size(); ++b)
            out << std::setw(int(width[b])) << verdict_word(report.results[b].cells[q].verdict);
        out << "\n";
    }
    bool test_build = false;
    for (const BackendResult &r : report.results) test_build |= r.backend->test_build;
    if (test_build) out << "\n" << kTestBuildNote << "\n";

    // Why: a skipped backend once, a skipped format per cell, every failure with its case.
    std::string notes;
    for (const BackendResult &r : report.results) {
        if (!r.backend->runnable()) {
            notes += (r.backend->broken ? "FAIL  " : "skip  ") + r.backend->label + ": " +
                     (r.backend->broken ? "broken plugin: " : "") + r.backend->skip_reason + "\n";
            continue;
        }
        for (size_t q = 0; q < report.qtypes.size(); ++q) {
            const Cell &c = r.cells[q];
            if (c.verdict == Verdict::Pass) continue;
            notes += std::string(c.verdict == Verdict::Fail ? "FAIL  " : "skip  ") + r.backend->label + " " +
                     expertkit::qtype_name(report.qtypes[q]) + ": " + c.detail + "\n";
        }
    }
    if (!notes.empty()) out << "\n" << notes;
    int64_t cases = 0;
    for (const BackendResult &r : report.results)
        for (const Cell &c : r.cells) cases += c.cases;
    out << "\nresult    ";
    if (report.any_failure())
        out << "FAIL: a backend differs from the scalar reference, or is broken";
    else
        out << "pass" << (cases == 0 ? ", but ONLY THE SCALAR REFERENCE RAN: no backend was compared with it" : "");
    out << " (" << cases << " backend x case comparisons)\n";
}

void print_json(std::ostream &out, const RunContext &ctx, const Report &report) {
    tools::Json j{{"seed", ctx.seed}, {"iterations", ctx.iterations}, {"scope", scope_name(ctx.scope)}};
    context_fields(j, ctx);
    tools::Json &backends = j["backends"] = tools::Json::array();
    int64_t cases = 0;
    for (const BackendResult &r : report.results) {
        tools::Json b = backend_fields(*r.backend);
        tools::Json &formats = b["formats"] = tools::Json::object();
        for (size_t q = 0; q < report.qtypes.size(); ++q) {
            const Cell &c = r.cells[q];
            formats[expertkit::qtype_name(report.qtypes[q])] = {
                {"result", verdict_json(c.verdict)}, {"cases", c.cases}, {"detail", c.detail}};
            cases += c.cases;
        }
        backends.push_back(std::move(b));
    }
    j["comparisons"] = cases;
    // "only_scalar": nothing ran besides the reference, so "passed" compared nothing.
    j["only_scalar"] = cases == 0;
    j["passed"] = !report.any_failure();
    out << tools::dump_json(j) << "\n";
}

}  // namespace memra::conformance
