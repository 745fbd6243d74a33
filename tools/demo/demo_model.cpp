#include "demo_model.h"

#include "memra/cpu_experts.h"

namespace memra::demo {

gguf_tool::SynthSpec demo_model(uint64_t seed, int threads) {
    gguf_tool::SynthSpec s;
    s.shape = {"demo", "qwen3moe", 512, 256, 4, 2, 4};
    // gate, up, down per layer. Layer 0 is the usual Q4_K_M mix; every format appears exactly once,
    // as a gate/up (input x, n_embd long) or a down (input h, n_ff long) projection.
    s.formats = {
        {MEMRA_QTYPE_Q4_K, MEMRA_QTYPE_Q8_0, MEMRA_QTYPE_Q6_K},
        {MEMRA_QTYPE_IQ4_XS, MEMRA_QTYPE_NVFP4, MEMRA_QTYPE_BF16},
        {MEMRA_QTYPE_Q2_K, MEMRA_QTYPE_Q3_K, MEMRA_QTYPE_Q5_K},
        {MEMRA_QTYPE_IQ3_S, MEMRA_QTYPE_Q4_0, MEMRA_QTYPE_F32},
    };
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
