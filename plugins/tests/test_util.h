// Small helpers shared by the plugin tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "memra/backend.h"
#include "memra/qtypes.h"
#include "scalar/scalar_backend.h"

namespace memra::plugin_tests {

inline uint32_t bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

inline float from_bits(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

inline const memra_qtype_info &qtype_by_name(const std::string &name) {
    for (const memra_qtype_info &q : memra_qtype_table)
        if (name == q.name) return q;
    throw std::invalid_argument("unknown qtype " + name);
}

inline const memra_kernel_v1 &scalar_kernel(int32_t qtype) {
    const memra_backend_v1 *b = memra_scalar_backend();
    for (int32_t i = 0; i < b->kernel_count; ++i)
        if (b->kernels[i].qtype == qtype) return b->kernels[i];
    throw std::invalid_argument("no scalar kernel for qtype " + std::to_string(qtype));
}

// The twelve weight formats, in memra_qtype_table order.
inline const char *const kAllNames[] = {"f32",  "q4_0", "q8_0",  "q2_K",   "q3_K", "q4_K",
                                        "q5_K", "q6_K", "iq3_s", "iq4_xs", "bf16", "nvfp4"};

// The weight formats that have ggml dot trials (examples/dot_<name>.txt) among the twelve.
inline const char *const kQuantizedNames[] = {"q4_0", "q8_0", "q2_K", "q3_K", "q4_K",
                                              "q5_K", "q6_K", "iq3_s", "iq4_xs", "nvfp4"};

}  // namespace memra::plugin_tests
