#include "activations.h"

#include <limits>

#include "synthetic_weights.h"

namespace memra::conformance {

std::vector<float> activation_rows(int32_t rows, int32_t n, std::mt19937_64 &rng) {
    std::vector<float> x = expertkit::random_input(rows * n, rng);
    for (int32_t r = 0; r < rows; ++r) {
        float *row = &x[size_t(r) * size_t(n)];
        switch (r % 8) {
        case 1:
            for (int32_t i = 0; i < n; ++i) row[i] = 0.0f;
            break;
        case 3:
            for (int32_t i = 0; i < n; i += 1 + int32_t(rng() % 61)) row[i] *= 3000.0f;
            break;
        case 4:  // a NaN and an infinity, in different blocks when the row has more than one
            row[rng() % uint64_t(n)] = std::numeric_limits<float>::quiet_NaN();
            row[rng() % uint64_t(n)] = (rng() & 1) ? std::numeric_limits<float>::infinity()
                                                   : -std::numeric_limits<float>::infinity();
            break;
        case 5:
            for (int32_t i = 0; i < n; ++i) row[i] = (rng() & 1) ? 4.0f : -4.0f;
            break;
        case 7:
            for (int32_t i = 0; i < n; ++i) row[i] *= 1e-38f;
            break;
        default:
            break;
        }
    }
    return x;
}

}  // namespace memra::conformance
