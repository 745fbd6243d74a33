#include "moe_layer.h"

#include <cstring>
#include <stdexcept>
#include <vector>

#include "formats.h"
#include "synthetic_weights.h"

namespace memra::truth {
namespace {

size_t aligned(size_t n) { return (n + 63) / 64 * 64; }

}  // namespace

MoeLayer::MoeLayer(int32_t qtype, int32_t n_embd, int32_t n_ff, int32_t n_expert, std::mt19937_64 &rng)
    : qtype_(qtype), n_embd_(n_embd), n_ff_(n_ff), n_expert_(n_expert) {
    gate_bytes_ = expertkit::row_bytes(qtype, n_embd) * size_t(n_ff);
    down_bytes_ = expertkit::row_bytes(qtype, n_ff) * size_t(n_embd);
    const size_t n = size_t(n_expert);
    up_at_ = aligned(n * gate_bytes_);
    down_at_ = up_at_ + aligned(n * gate_bytes_);
    size_ = aligned(down_at_ + n * down_bytes_);
    data_.reset(static_cast<uint8_t *>(std::aligned_alloc(64, size_)));
    if (!data_) throw std::bad_alloc();
    std::memset(data_.get(), 0, size_);
    for (size_t i = 0; i < n; ++i) {
        const std::vector<uint8_t> g = expertkit::random_weights(qtype, n_ff, n_embd, rng);
        const std::vector<uint8_t> u = expertkit::random_weights(qtype, n_ff, n_embd, rng);
        const std::vector<uint8_t> d = expertkit::random_weights(qtype, n_embd, n_ff, rng);
        std::memcpy(data_.get() + i * gate_bytes_, g.data(), gate_bytes_);
        std::memcpy(data_.get() + up_at_ + i * gate_bytes_, u.data(), gate_bytes_);
        std::memcpy(data_.get() + down_at_ + i * down_bytes_, d.data(), down_bytes_);
    }
}

CpuExpertV2 MoeLayer::expert(int32_t i, const Scales &s, float route_weight) const {
    auto projection = [&](size_t at, size_t bytes, int32_t in, int32_t out, float scale) {
        CpuProjectionV2 p{};
        p.weights = data_.get() + at + size_t(i) * bytes;
        p.qtype = qtype_;
        p.in_features = in;
        p.out_features = out;
        p.row_bytes = expertkit::row_bytes(qtype_, in);
        p.byte_len = bytes;
        p.file_fd = -1;
        p.scale = scale;
        return p;
    };
    CpuExpertV2 e{};
    e.gate = projection(0, gate_bytes_, n_embd_, n_ff_, s.gate);
    e.up = projection(up_at_, gate_bytes_, n_embd_, n_ff_, s.up);
    e.down = projection(down_at_, down_bytes_, n_ff_, n_embd_, s.down);
    e.route_weight = route_weight;
    return e;
}

memra_ggml_peer_weights MoeLayer::ggml() const {
    memra_ggml_peer_weights w{};
    w.qtype = qtype_;
    w.n_embd = n_embd_;
    w.n_ff = n_ff_;
    w.n_expert = n_expert_;
    w.gate = data_.get();
    w.up = data_.get() + up_at_;
    w.down = data_.get() + down_at_;
    w.base = data_.get();
    w.size = size_;
    return w;
}

}  // namespace memra::truth
