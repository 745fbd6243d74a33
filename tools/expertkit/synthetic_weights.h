// Synthetic weights that look like a real model's to the code under test: every block is valid,
// the quant bits are random, and every scale field holds a sane finite value chosen so that the
// dequantized weights have an rms of a few hundredths (real FFN weights are ~0.01-0.1). That spread
// makes the accuracy tests meaningful: the activations reaching the down projection are O(1), as
// in a real model, so activation quantization errors have their realistic relative size.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace memra::expertkit {

// rows rows of in_features values (a multiple of the qtype's block size) in qtype's layout.
std::vector<uint8_t> random_weights(int32_t qtype, int32_t rows, int32_t in_features,
                                    std::mt19937_64 &rng);

// n activations ~ N(0, sigma^2): the scale of a normalised residual stream entering an FFN.
std::vector<float> random_input(int32_t n, std::mt19937_64 &rng, float sigma = 1.0f);

}  // namespace memra::expertkit
