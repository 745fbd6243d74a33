// Double-precision evaluations of experts, the yardsticks of every accuracy check:
//
//  (a) exact:        the dequantized weights applied to the unquantized f32 input, in double.
//  (b) quant_aware:  the same, but with the activations rounded exactly as the library rounds
//                    them (ggml's scheme): x through the canonical quantizer of each projection's
//                    activation format, h = silu(g) * u in double, converted to float and rounded
//                    through down's activation format. (b) differs from the library only by float
//                    accumulation order, so it can be held to a tight tolerance.
//
// Alongside, what accuracy.h needs to turn the distances into tolerances: a first-order
// prediction of how far activation rounding moves (b) away from (a), and an allowance for the
// h values that lie so close to a rounding boundary that the library's float h may round the
// other way than (b)'s double h.
#pragma once

#include <cstdint>
#include <vector>

#include "memra/cpu_experts.h"

namespace memra::expertkit {

struct Evaluation {
    std::vector<double> exact;        // reference (a)
    std::vector<double> quant_aware;  // reference (b)
    // sum over experts (token) or rows of |route weight| * ||y||: the size the float rounding of
    // the library's accumulation is proportional to (immune to cancellation between experts).
    double magnitude = 0;
    // Predicted rms of ||(b) - (a)||, propagated linearly from the rounding noise of each
    // activation element (uniform within +-step/2, variance step^2 / 12).
    double predicted_noise = 0;
    // Upper bound on ||library - (b)|| caused by h values within float error of a rounding
    // boundary: one quantization step each, times the norm of the down column it multiplies.
    double flip_allowance = 0;
};

// output = sum_i route_weight_i * y_i(input), as memra_cpu_moe_token_v2.
Evaluation evaluate_token(const CpuExpertV2 *experts, int32_t count, const float *input);

// outputs[r] = route_weights[r] * y(inputs[r]), as memra_cpu_expert_rows_v2 (rows-major).
Evaluation evaluate_rows(const CpuExpertV2 &expert, const float *inputs, int32_t rows,
                         const float *route_weights);

// ||got - ref|| / ||ref||.
double relative_l2(const float *got, const std::vector<double> &ref);
double relative_l2(const std::vector<double> &got, const std::vector<double> &ref);
double l2_norm(const std::vector<double> &v);

}  // namespace memra::expertkit
