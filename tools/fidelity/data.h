// The rows and activations memra-fidelity measures on: every weight format's blocks, at realistic
// scales (expertkit's synthetic weights and a unit-normal input) or adversarial ones.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace memra::fidelity {

enum class Scales { Realistic, Adversarial };

std::string scales_name(Scales s);

struct Problem {
    int32_t qtype = 0;
    int32_t rows = 0, n = 0;
    std::vector<uint8_t> weights;  // rows x n values in qtype's layout
    std::vector<double> w;         // the same, dequantized (exact: every decoder's value is a float)
    std::vector<float> x;          // the f32 input row
};

// Realistic: expertkit::random_weights (block scales within a factor of three, rms ~0.04) and
// x ~ N(0, 1). Adversarial: f32 rows whose 32-element blocks are scaled by 2^U(-8, 8) with one
// element in 64 an outlier (x 16), encoded by the project's own encoders (every format's scale
// fields then span the range the format allows), and an input whose 256-element blocks are
// scaled by 2^U(-6, 6) with a few outlier channels (x 64, as LLM activations have): per-block
// terms of very different sizes, the case where the float order matters most.
Problem make_problem(int32_t qtype, int32_t rows, int32_t n, Scales scales, uint64_t seed);

}  // namespace memra::fidelity
