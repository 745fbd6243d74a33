// The fold that ends the float dots (F32, BF16: dot_float.cpp), which keep their version-1
// orders: eight f32 lanes summed as ggml's hsum_float_8. The integer-dot formats have no lanes
// (canonical order v2, scalar/block_order.h).
#pragma once

namespace memra::scalar {

constexpr int kLanes = 8;

struct FloatLanes {
    float v[kLanes] = {};
};

// ggml's hsum_float_8: r_j = acc[j+4] + acc[j], then (r0 + r2) + (r1 + r3).
inline float hsum8(const FloatLanes &acc) {
    float r[4];
    for (int j = 0; j < 4; ++j) r[j] = acc.v[j + 4] + acc.v[j];
    return (r[0] + r[2]) + (r[1] + r[3]);
}

}  // namespace memra::scalar
