#include "run.h"

#include <exception>

#include "formats.h"

namespace memra::conformance {
namespace {

// splitmix64's finaliser: nearby inputs give unrelated seeds.
uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// The cells still to be decided by a case of `qtype`: runnable, with a kernel of their own, and
// not already failed (the first difference is the one reported).
struct OpenCell {
    const Backend *backend;
    Cell *cell;
};

std::vector<OpenCell> open_cells(Report &report, size_t q) {
    std::vector<OpenCell> open;
    for (BackendResult &r : report.results)
        if (r.backend->runnable() && r.cells[q].verdict == Verdict::Pass) open.push_back({r.backend, &r.cells[q]});
    return open;
}

void fail(Cell &cell, const std::string &what) {
    cell.verdict = Verdict::Fail;
    cell.detail = what;
}

// Compares every open cell on one case: `compare` returns "" or the difference.
template <class Compare>
void compare_all(Report &report, size_t q, const std::string &case_name, Compare &&compare) {
    for (const OpenCell &open : open_cells(report, q)) {
        ++open.cell->cases;
        const std::string why = compare(*open.backend);
        if (!why.empty()) fail(*open.cell, case_name + ": " + why);
    }
}

void run_format(const Backend &reference, const RunOptions &options, Report &report, size_t q) {
    const int32_t qtype = report.qtypes[q];
    const std::string name = expertkit::qtype_name(qtype);
    for (BackendResult &r : report.results) {
        // Skipped only where this CPU lacks what the plugin needs; a broken plugin, or one
        // without a kernel for a format (every SIMD build serves all of them), fails. A
        // rows-only build's missing format is served by the plugins below: its calls still run.
        if (!r.backend->runnable())
            r.cells[q] = {r.backend->broken ? Verdict::Fail : Verdict::Skipped,
                          (r.backend->broken ? "broken plugin: " : "") + r.backend->skip_reason, 0};
        else if (!find_kernel(*r.backend->table, qtype) && serves_token_path(*r.backend->table))
            r.cells[q] = {Verdict::Fail, "no " + name + " kernel", 0};
    }
    Plan plan = small_plan(qtype);
    const Plan big = realistic_plan(qtype, options.scope);
    plan.kernels.insert(plan.kernels.end(), big.kernels.begin(), big.kernels.end());
    plan.calls.insert(plan.calls.end(), big.calls.begin(), big.calls.end());

    for (int32_t it = 0; it < options.iterations; ++it) {
        int32_t index = 0;
        for (const KernelShape &shape : plan.kernels) {
            if (open_cells(report, q).empty()) return;
            const KernelCase c(*reference.table, qtype, shape, case_seed(options.seed, it, qtype, index++));
            compare_all(report, q, "kernels " + shape.name(), [&](const Backend &b) { return c.compare(*b.table); });
        }
        for (const CallShape &shape : plan.calls) {
            if (open_cells(report, q).empty()) return;
            const std::string case_name = "calls " + shape.name();
            try {
                const CallCase c(*reference.registry, qtype, shape, case_seed(options.seed, it, qtype, index++));
                compare_all(report, q, case_name, [&](const Backend &b) {
                    return b.registry ? c.compare(*b.registry) : b.registry_problem;
                });
            } catch (const std::exception &e) {
                for (const OpenCell &open : open_cells(report, q))
                    fail(*open.cell, case_name + ": the scalar reference failed: " + e.what());
            }
        }
    }
}

}  // namespace

bool Report::any_failure() const {
    for (const BackendResult &r : results)
        for (const Cell &c : r.cells)
            if (c.verdict == Verdict::Fail) return true;
    return false;
}

uint64_t case_seed(uint64_t seed, int32_t iteration, int32_t qtype, int32_t case_index) {
    return mix(mix(mix(seed) + uint64_t(iteration)) + (uint64_t(qtype) << 16) + uint64_t(case_index));
}

Report run_conformance(const Backend &reference, const RunOptions &options) {
    Report report;
    report.qtypes = options.qtypes;
    for (const Backend *b : options.backends) report.results.push_back({b, std::vector<Cell>(options.qtypes.size())});
    for (size_t q = 0; q < report.qtypes.size(); ++q) {
        if (options.progress)
            options.progress(expertkit::qtype_name(report.qtypes[q]) + " (" + std::to_string(q + 1) + "/" +
                             std::to_string(report.qtypes.size()) + ")");
        run_format(reference, options, report, q);
    }
    return report;
}

}  // namespace memra::conformance
