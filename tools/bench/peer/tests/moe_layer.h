// One MoE layer's experts, laid out once for both sides: three tensors (gate, up, down), each
// expert's rows back to back, 64-byte aligned, as ggml's mul_mat_id takes them (the peer's
// memra_ggml_peer_weights) and as memra's CpuExpertV2 descriptors point at them: the same bytes.
// Every expert's weights are the expert kit's synthetic weights of its own seed (sane scales).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>

#include "memra_cpu_experts_v2.h"
#include "peer/ggml_peer_abi.h"

namespace memra::truth {

struct Scales {
    float gate = 1.0f, up = 1.0f, down = 1.0f;
};

class MoeLayer {
public:
    MoeLayer(int32_t qtype, int32_t n_embd, int32_t n_ff, int32_t n_expert, std::mt19937_64 &rng);

    // Expert i, memory-backed, with these macro scales and route weight.
    CpuExpertV2 expert(int32_t i, const Scales &s, float route_weight) const;
    memra_ggml_peer_weights ggml() const;

    int32_t n_embd() const { return n_embd_; }
    int32_t n_ff() const { return n_ff_; }
    int32_t n_expert() const { return n_expert_; }

private:
    struct Free {
        void operator()(uint8_t *p) const { std::free(p); }
    };
    int32_t qtype_, n_embd_, n_ff_, n_expert_;
    size_t gate_bytes_, down_bytes_;  // one expert's gate (= up) and down
    size_t up_at_, down_at_, size_;
    std::unique_ptr<uint8_t, Free> data_;
};

}  // namespace memra::truth
