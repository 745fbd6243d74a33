// Every check CONTRACT.md lists, done before any work, each failure naming the expert, the
// projection, the field and the value. Throws memra::Error; touches no output.
#pragma once

#include <cstdint>

#include "memra_cpu_experts_v2.h"

namespace memra {

void validate_token_call(const CpuExpertV2 *experts, int32_t count, const float *input,
                         const float *output, int32_t threads);

void validate_rows_call(const CpuExpertV2 *expert, const float *inputs, int32_t rows,
                        const float *route_weights, const float *outputs, int32_t threads);

// One projection on its own (also what prefetch checks). `where` prefixes messages, e.g.
// "expert 3 gate" (expert_label, call_plan.h).
void validate_projection(const CpuProjectionV2 &p, const char *where);

}  // namespace memra
