#include "data.h"

#include <cmath>
#include <random>

#include "formats.h"
#include "quantize.h"
#include "synthetic_weights.h"

namespace memra::fidelity {
namespace {

double power_of_two(std::mt19937_64 &rng, int range) {
    return std::ldexp(1.0, int(rng() % uint64_t(2 * range + 1)) - range);
}

std::vector<uint8_t> adversarial_weights(int32_t qtype, int32_t rows, int32_t n, std::mt19937_64 &rng) {
    std::normal_distribution<float> value(0.0f, 0.04f);
    std::vector<float> f(size_t(rows) * size_t(n));
    for (size_t b = 0; b < f.size(); b += 32) {
        const float scale = float(power_of_two(rng, 8));
        for (size_t i = b; i < b + 32 && i < f.size(); ++i)
            f[i] = value(rng) * scale * (rng() % 64 == 0 ? 16.0f : 1.0f);
    }
    return quantize::quantize_rows(qtype, f.data(), rows, n);
}

std::vector<float> adversarial_input(int32_t n, std::mt19937_64 &rng) {
    std::normal_distribution<float> value(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(n));
    for (size_t b = 0; b < x.size(); b += 256) {
        const float scale = float(power_of_two(rng, 6));
        for (size_t i = b; i < b + 256 && i < x.size(); ++i) x[i] = value(rng) * scale;
    }
    for (int k = 0; k < 4; ++k) x[rng() % x.size()] *= 64.0f;
    return x;
}

}  // namespace

std::string scales_name(Scales s) { return s == Scales::Realistic ? "realistic" : "adversarial"; }

Problem make_problem(int32_t qtype, int32_t rows, int32_t n, Scales scales, uint64_t seed) {
    std::mt19937_64 rng(seed * 1000003u + uint64_t(qtype) * 7919u + uint64_t(scales));
    Problem p;
    p.qtype = qtype;
    p.rows = rows;
    p.n = n;
    if (scales == Scales::Realistic) {
        p.weights = expertkit::random_weights(qtype, rows, n, rng);
        p.x = expertkit::random_input(n, rng);
    } else {
        p.weights = adversarial_weights(qtype, rows, n, rng);
        p.x = adversarial_input(n, rng);
    }
    const std::vector<float> w = expertkit::dequantize(qtype, p.weights.data(), rows, n);
    p.w.assign(w.begin(), w.end());
    return p;
}

}  // namespace memra::fidelity
