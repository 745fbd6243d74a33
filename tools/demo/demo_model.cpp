#include "demo_model.h"

#include <algorithm>

#include "memra/cpu_experts.h"
#include "memra/qtypes.h"

namespace memra::demo {

namespace {

// The order the formats take in the layers' gate, up and down: layer 0 is the usual Q4_K_M mix,
// then the others, each format exactly once, as a gate/up (input x, n_embd long) or a down
// (input h, n_ff long) projection. Formats of the list not named here follow, in list order; the
// last layer is filled up from the front of this order.
constexpr int32_t kDemoOrder[] = {
    MEMRA_QTYPE_Q4_K, MEMRA_QTYPE_Q8_0, MEMRA_QTYPE_Q6_K, MEMRA_QTYPE_IQ4_XS, MEMRA_QTYPE_NVFP4, MEMRA_QTYPE_BF16,
    MEMRA_QTYPE_Q2_K, MEMRA_QTYPE_Q3_K, MEMRA_QTYPE_Q5_K, MEMRA_QTYPE_IQ3_S,  MEMRA_QTYPE_Q4_0,  MEMRA_QTYPE_F32,
};

}  // namespace

uint32_t demo_layers() { return uint32_t((MEMRA_QTYPE_COUNT + 2) / 3); }

gguf_tool::SynthSpec demo_model(uint64_t seed, int threads) {
    std::vector<uint32_t> order;
    for (int32_t id : kDemoOrder)
        if (memra_qtype_find(id)) order.push_back(uint32_t(id));
    for (const memra_qtype_info &f : memra_qtype_table)
        if (std::find(order.begin(), order.end(), uint32_t(f.id)) == order.end()) order.push_back(uint32_t(f.id));
    const uint32_t layers = demo_layers();
    gguf_tool::SynthSpec s;
    s.shape = {"demo", "qwen3moe", 512, 256, 4, 2, layers};
    for (uint32_t l = 0; l < layers; ++l)
        s.formats.push_back({order[(3 * l) % order.size()], order[(3 * l + 1) % order.size()], order[(3 * l + 2) % order.size()]});
    s.seed = seed;
    s.threads = threads;
    s.progress = 0;
    return s;
}

Selection demo_selection(int layer, uint64_t n_expert) {
    const uint32_t first = uint32_t(uint64_t(layer) % n_expert);
    const uint32_t second = uint32_t((uint64_t(layer) + n_expert / 2) % n_expert);
    if (first == second) return {{first}, {1.0f}};
    return {{first, second}, {0.625f, 0.375f}};
}

}  // namespace memra::demo
