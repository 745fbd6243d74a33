// Small helpers shared by the plugin tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

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

inline const memra_kernel_v2 &scalar_kernel(int32_t qtype) {
    const memra_backend_v2 *b = memra_scalar_backend();
    for (int32_t i = 0; i < b->kernel_count; ++i)
        if (b->kernels[i].qtype == qtype) return b->kernels[i];
    throw std::invalid_argument("no scalar kernel for qtype " + std::to_string(qtype));
}

// Every weight format of MEMRA_FORMAT_LIST, in its order.
#define MEMRA_TEST_NAME_(name, NAME, id, elems, bytes, act) #name,
inline const char *const kAllNames[] = {MEMRA_FORMAT_LIST(MEMRA_TEST_NAME_)};
#undef MEMRA_TEST_NAME_

// The block formats of the list (all but F32 and BF16): each has ggml dot trials
// (examples/dot_<name>.txt).
inline const std::vector<const char *> kQuantizedNames = [] {
    std::vector<const char *> names;
    for (const memra_qtype_info &f : memra_qtype_table)
        if (f.block_elems > 1) names.push_back(f.name);
    return names;
}();

}  // namespace memra::plugin_tests
