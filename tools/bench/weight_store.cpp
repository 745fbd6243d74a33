#include "weight_store.h"

#include <cstring>
#include <random>

#include "expert_set.h"
#include "formats.h"

namespace memra::bench {
namespace {

constexpr size_t kTensorAlign = 64;

size_t aligned(size_t n) { return (n + kTensorAlign - 1) / kTensorAlign * kTensorAlign; }

CpuProjectionV2 shifted(CpuProjectionV2 p, int32_t expert) {
    p.weights += size_t(expert) * p.byte_len;
    return p;
}

// dst = src's rows rotated up by `shift`: row r of dst is row (r + shift) % rows of src.
void rotated_copy(uint8_t *dst, const CpuProjectionV2 &src, size_t shift) {
    const size_t rows = size_t(src.out_features), row_bytes = size_t(src.row_bytes);
    shift %= rows;
    std::memcpy(dst, src.weights + shift * row_bytes, (rows - shift) * row_bytes);
    std::memcpy(dst + (rows - shift) * row_bytes, src.weights, shift * row_bytes);
}

CpuProjectionV2 in_file(CpuProjectionV2 p, const uint8_t *base, int fd) {
    p.file_fd = fd;
    p.file_offset = uint64_t(p.weights - base);
    p.weights = nullptr;
    return p;
}

}  // namespace

size_t WeightStore::expert_bytes(int32_t qtype, const Shape &shape) {
    return 2 * expertkit::row_bytes(qtype, shape.n_embd) * size_t(shape.n_ff) +
           expertkit::row_bytes(qtype, shape.n_ff) * size_t(shape.n_embd);
}

WeightStore::WeightStore(int32_t qtype, const Shape &shape, int32_t count, bool hugepages, uint64_t seed)
    : qtype_(qtype), shape_(shape), count_(count), expert_bytes_(expert_bytes(qtype, shape)) {
    std::mt19937_64 rng(seed);
    expertkit::ExpertSet one(shape.n_embd, shape.n_ff);
    const CpuExpertV2 &e = one.add(expertkit::uniform_spec(qtype), rng);
    const size_t n = size_t(count);
    const size_t up_at = aligned(n * e.gate.byte_len), down_at = up_at + aligned(n * e.up.byte_len);
    size_ = down_at + n * e.down.byte_len;
    buffer_ = std::make_unique<PageBuffer>(size_, hugepages);
    uint8_t *base = buffer_->data();
    layout_ = e;
    layout_.gate.weights = base;
    layout_.up.weights = base + up_at;
    layout_.down.weights = base + down_at;
    const CpuProjectionV2 *one_expert[3] = {&e.gate, &e.up, &e.down};
    uint8_t *tensors[3] = {base, base + up_at, base + down_at};
    for (size_t p = 0; p < 3; ++p)
        for (size_t i = 0; i < n; ++i) rotated_copy(tensors[p] + i * one_expert[p]->byte_len, *one_expert[p], i * (p + 1));
}

CpuExpertV2 WeightStore::memory_expert(int32_t i, float route_weight) const {
    CpuExpertV2 e = layout_;
    e.gate = shifted(e.gate, i);
    e.up = shifted(e.up, i);
    e.down = shifted(e.down, i);
    e.route_weight = route_weight;
    return e;
}

CpuExpertV2 WeightStore::file_expert(int32_t i, int fd, float route_weight) const {
    CpuExpertV2 e = memory_expert(i, route_weight);
    e.gate = in_file(e.gate, data(), fd);
    e.up = in_file(e.up, data(), fd);
    e.down = in_file(e.down, data(), fd);
    return e;
}

}  // namespace memra::bench
