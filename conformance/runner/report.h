// How memra-conformance shows what it found and what it checked: a table for people (formats
// down, backends across, pass / FAIL / skip, then why each skip and each failure), or JSON.
#pragma once

#include <ostream>
#include <string>

#include "backends.h"
#include "dispatch/cpu_features.h"
#include "run.h"

namespace memra::conformance {

struct RunContext {
    const CpuFeatures *cpu = nullptr;
    const BackendSet *backends = nullptr;
    uint64_t seed = 0;
    int32_t iterations = 0;
    Scope scope = Scope::Default;
};

// --list: every backend found, what it requires, and whether it runs here (or why not).
void print_backend_list(std::ostream &out, const RunContext &ctx);
void print_backend_list_json(std::ostream &out, const RunContext &ctx);

void print_table(std::ostream &out, const RunContext &ctx, const Report &report);
void print_json(std::ostream &out, const RunContext &ctx, const Report &report);

}  // namespace memra::conformance
