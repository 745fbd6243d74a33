// The SwiGLU expert evaluation behind the two compute entry points. Inputs are assumed
// validated (validate.h); failures still possible here (no kernel for a qtype, I/O, memory)
// throw memra::Error before any output is written.
#pragma once

#include <cstdint>

#include "memra_cpu_experts_v2.h"

namespace memra {

class BackendRegistry;

// output[n_out] = sum_i route_weight_i * (s_d,i * down_i(silu(s_g,i * gate_i x) * (s_u,i * up_i x)))
void moe_token(const BackendRegistry &registry, const CpuExpertV2 *experts, int32_t count,
               const float *input, float *output, int32_t threads);

// outputs[r] = route_weights[r] * (s_d * down(silu(s_g * gate x_r) * (s_u * up x_r))), r < rows
void expert_rows(const BackendRegistry &registry, const CpuExpertV2 &expert, const float *inputs,
                 int32_t rows, const float *route_weights, float *outputs, int32_t threads);

}  // namespace memra
