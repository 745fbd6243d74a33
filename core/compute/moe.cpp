// The two compute entry points as thin builders: each describes its call as (experts x rows) in a
// CallPlan (call_plan.h) and hands it to the one executor (execute.h).
#include "compute/moe.h"

#include "compute/call_plan.h"
#include "compute/execute.h"
#include "library.h"
#include "stats.h"

namespace memra {
namespace {

// Whether file-backed weights go to the weight cache (execute's CallWeights), which decides the
// layout their kernels may want (planned_kernel, call_plan.h).
bool file_cache() { return Library::instance().cache().budget() > 0; }

}  // namespace

void moe_token(const BackendRegistry &registry, const CpuExpertV2 *experts, int32_t count,
               const float *input, float *output, int32_t threads) {
    StopWatch watch;
    CallPlan &plan = thread_plan();
    plan_call(registry, experts, count, /*m=*/1, /*row_weights=*/nullptr, plan, file_cache());
    execute(registry, plan, input, output, threads, watch);
}

void expert_rows(const BackendRegistry &registry, const CpuExpertV2 &expert, const float *inputs,
                 int32_t rows, const float *route_weights, float *outputs, int32_t threads) {
    StopWatch watch;
    CallPlan &plan = thread_plan();
    plan_call(registry, &expert, 1, rows, route_weights, plan, file_cache());
    execute(registry, plan, inputs, outputs, threads, watch);
}

}  // namespace memra
