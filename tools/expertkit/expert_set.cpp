#include "expert_set.h"

#include "formats.h"
#include "synthetic_weights.h"

namespace memra::expertkit {

ExpertSpec uniform_spec(int32_t qtype, float route_weight) {
    ExpertSpec spec{qtype, qtype, qtype};
    spec.route_weight = route_weight;
    return spec;
}

CpuProjectionV2 ExpertSet::make_projection(int32_t qtype, int32_t out_features,
                                           int32_t in_features, float scale,
                                           std::mt19937_64 &rng) {
    buffers_.push_back(std::make_unique<std::vector<uint8_t>>(
        random_weights(qtype, out_features, in_features, rng)));
    CpuProjectionV2 p{};
    p.weights = buffers_.back()->data();
    p.qtype = qtype;
    p.in_features = in_features;
    p.out_features = out_features;
    p.row_bytes = row_bytes(qtype, in_features);
    p.byte_len = buffers_.back()->size();
    p.file_fd = -1;
    p.file_offset = 0;
    p.scale = scale;
    return p;
}

const CpuExpertV2 &ExpertSet::add(const ExpertSpec &spec, std::mt19937_64 &rng) {
    CpuExpertV2 e{};
    e.gate = make_projection(spec.gate_qtype, n_ff_, n_embd_, spec.gate_scale, rng);
    e.up = make_projection(spec.up_qtype, n_ff_, n_embd_, spec.up_scale, rng);
    e.down = make_projection(spec.down_qtype, n_embd_, n_ff_, spec.down_scale, rng);
    e.route_weight = spec.route_weight;
    experts_.push_back(e);
    return experts_.back();
}

}  // namespace memra::expertkit
