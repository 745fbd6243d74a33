// The one executor behind both compute calls: runs a CallPlan (call_plan.h) over its m activation
// rows, with gemv when m == 1 and gemm otherwise (the two agree bit for bit by the plugin
// contract, so a rows call of one row equals a token call of one expert).
#pragma once

#include <cstdint>

#include "compute/call_plan.h"

namespace memra {

class StopWatch;

// This thread's plan, reused call after call (calls do not nest on a thread).
CallPlan &thread_plan();

// Resolves the plan's file-backed weights, quantizes the activations `inputs` (m rows of n_in),
// runs the tiles on up to `threads` threads and writes `outputs` (m rows of n_out): for per-expert
// route weights (token call) the route-weighted sum over the experts in expert order; for per-row
// route weights (rows call, one expert) that row's weight times the expert's output. `watch` has
// timed the planning so far (prepare_ns).
void execute(const BackendRegistry &registry, CallPlan &plan, const float *inputs, float *outputs,
             int32_t threads, StopWatch &watch);

}  // namespace memra
