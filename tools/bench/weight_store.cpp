#include "weight_store.h"

#include <cstring>
#include <random>

#include "expert_set.h"
#include "formats.h"

namespace memra::bench {
namespace {

CpuProjectionV2 shifted(CpuProjectionV2 p, ptrdiff_t by) {
    p.weights += by;
    return p;
}

CpuProjectionV2 in_file(CpuProjectionV2 p, const uint8_t *base, int fd) {
    p.file_fd = fd;
    p.file_offset = uint64_t(p.weights - base);
    p.weights = nullptr;
    return p;
}

}  // namespace

size_t WeightStore::expert_bytes(int32_t qtype, const Shape &shape) {
    return 2 * testkit::row_bytes(qtype, shape.n_embd) * size_t(shape.n_ff) +
           testkit::row_bytes(qtype, shape.n_ff) * size_t(shape.n_embd);
}

WeightStore::WeightStore(int32_t qtype, const Shape &shape, int32_t count, bool hugepages, uint64_t seed)
    : count_(count), expert_bytes_(expert_bytes(qtype, shape)) {
    buffer_ = std::make_unique<PageBuffer>(size_t(count) * expert_bytes_, hugepages);
    std::mt19937_64 rng(seed);
    testkit::ExpertSet one(shape.n_embd, shape.n_ff);
    const CpuExpertV2 &e = one.add(testkit::uniform_spec(qtype), rng);
    uint8_t *slot0 = buffer_->data();
    size_t at = 0;
    for (const CpuProjectionV2 *p : {&e.gate, &e.up, &e.down}) {
        std::memcpy(slot0 + at, p->weights, p->byte_len);
        at += p->byte_len;
    }
    for (int32_t i = 1; i < count; ++i) std::memcpy(slot0 + size_t(i) * expert_bytes_, slot0, expert_bytes_);
    layout_ = e;
    layout_.gate.weights = slot0;
    layout_.up.weights = slot0 + e.gate.byte_len;
    layout_.down.weights = slot0 + e.gate.byte_len + e.up.byte_len;
}

CpuExpertV2 WeightStore::memory_expert(int32_t i, float route_weight) const {
    const ptrdiff_t by = ptrdiff_t(size_t(i) * expert_bytes_);
    CpuExpertV2 e = layout_;
    e.gate = shifted(e.gate, by);
    e.up = shifted(e.up, by);
    e.down = shifted(e.down, by);
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
