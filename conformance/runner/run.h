// A whole conformance run: every selected backend against the scalar reference on every
// selected format, case by case (one reference computation shared by all backends), collected
// into one cell per backend and format.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backends.h"
#include "plan.h"

namespace memra::conformance {

struct RunOptions {
    std::vector<const Backend *> backends;  // the subjects to check (runnable or not)
    std::vector<int32_t> qtypes;
    uint64_t seed = 1;
    int32_t iterations = 1;  // each repeats every case on fresh random data
    Scope scope = Scope::Default;
    // Called before each format's cases ("q4_K 3/12"); may be empty.
    std::function<void(const std::string &)> progress;
};

enum class Verdict { Pass, Fail, Skipped };

struct Cell {
    Verdict verdict = Verdict::Pass;
    std::string detail;  // Fail: the case and the first difference; Skipped: why
    int64_t cases = 0;   // cases compared (kernel shapes + call shapes, times iterations)
};

struct BackendResult {
    const Backend *backend = nullptr;
    std::vector<Cell> cells;  // one per RunOptions::qtypes entry
};

struct Report {
    std::vector<int32_t> qtypes;
    std::vector<BackendResult> results;
    bool any_failure() const;
};

// The seed of one case: the same for every backend, different for every case and iteration.
uint64_t case_seed(uint64_t seed, int32_t iteration, int32_t qtype, int32_t case_index);

Report run_conformance(const Backend &reference, const RunOptions &options);

}  // namespace memra::conformance
