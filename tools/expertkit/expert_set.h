// A set of synthetic experts in ABI v2 descriptors, owning the weight bytes they point at.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "memra/cpu_experts.h"

namespace memra::expertkit {

// Formats and macro scales of one expert. route_weight is the token call's mixing weight.
struct ExpertSpec {
    int32_t gate_qtype;
    int32_t up_qtype;
    int32_t down_qtype;
    float gate_scale = 1.0f;
    float up_scale = 1.0f;
    float down_scale = 1.0f;
    float route_weight = 1.0f;
};

// The same qtype for all three projections.
ExpertSpec uniform_spec(int32_t qtype, float route_weight = 1.0f);

class ExpertSet {
public:
    ExpertSet(int32_t n_embd, int32_t n_ff) : n_embd_(n_embd), n_ff_(n_ff) {}
    // Descriptors point into buffers this object owns: copying would alias them, moving is fine.
    ExpertSet(const ExpertSet &) = delete;
    ExpertSet &operator=(const ExpertSet &) = delete;
    ExpertSet(ExpertSet &&) = default;
    ExpertSet &operator=(ExpertSet &&) = default;

    // Appends an expert with gate/up n_embd -> n_ff and down n_ff -> n_embd.
    const CpuExpertV2 &add(const ExpertSpec &spec, std::mt19937_64 &rng);

    // A valid memory-backed projection of any shape, its bytes owned by this set (for tests that
    // build experts whose shapes do not chain).
    CpuProjectionV2 make_projection(int32_t qtype, int32_t out_features, int32_t in_features,
                                    float scale, std::mt19937_64 &rng);

    const CpuExpertV2 *data() const { return experts_.data(); }
    int32_t count() const { return int32_t(experts_.size()); }
    const CpuExpertV2 &operator[](int32_t i) const { return experts_[size_t(i)]; }
    // Copies of the descriptors, for tests that break one field.
    std::vector<CpuExpertV2> descriptors() const { return experts_; }
    int32_t n_embd() const { return n_embd_; }
    int32_t n_ff() const { return n_ff_; }

private:
    int32_t n_embd_;
    int32_t n_ff_;
    // unique_ptr keeps every buffer at a fixed address while more are added.
    std::vector<std::unique_ptr<std::vector<uint8_t>>> buffers_;
    std::vector<CpuExpertV2> experts_;
};

}  // namespace memra::expertkit
