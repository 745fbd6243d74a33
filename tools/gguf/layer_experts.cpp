#include "layer_experts.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace memra::gguf_tool {
namespace {

CpuProjectionV2 projection(const gguf::File &file, const gguf::TensorInfo &t, uint32_t expert, int fd) {
    const gguf::ExpertSlice s = gguf::expert_slice(t, expert);
    CpuProjectionV2 p{};
    p.qtype = int32_t(s.qtype);
    p.in_features = int32_t(s.in_features);
    p.out_features = int32_t(s.out_features);
    p.row_bytes = s.row_bytes;
    p.byte_len = s.bytes;
    p.scale = 1.0f;
    if (fd >= 0) {
        p.weights = nullptr;
        p.file_fd = fd;
        p.file_offset = file.model().data_offset + s.offset;
    } else {
        p.weights = file.tensor_data(t) + (s.offset - t.offset);
        p.file_fd = -1;
        p.file_offset = 0;
    }
    return p;
}

}  // namespace

LayerExperts::LayerExperts(const gguf::File &file, const gguf::MoeLayer &layer, const std::vector<uint32_t> &ids,
                           const std::vector<float> &route_weights, WeightSource source) {
    if (!layer.usable()) throw std::runtime_error("layer " + std::to_string(layer.layer) + ": " + layer.problem);
    for (uint32_t id : ids)  // before the file is opened, so that a throw leaks nothing
        if (id >= layer.n_expert)
            throw std::runtime_error("expert " + std::to_string(id) + " does not exist: layer " +
                                     std::to_string(layer.layer) + " has " + std::to_string(layer.n_expert));
    if (source == WeightSource::File) {
        fd_ = ::open(file.path().c_str(), O_RDONLY | O_CLOEXEC);
        if (fd_ < 0) throw std::runtime_error(file.path() + ": " + std::strerror(errno));
    }
    for (size_t i = 0; i < ids.size(); ++i) {
        CpuExpertV2 e{};
        e.gate = projection(file, *layer.gate, ids[i], fd_);
        e.up = projection(file, *layer.up, ids[i], fd_);
        e.down = projection(file, *layer.down, ids[i], fd_);
        e.route_weight = route_weights.at(i);
        experts_.push_back(e);
    }
}

LayerExperts::~LayerExperts() {
    if (fd_ >= 0) ::close(fd_);
}

uint64_t LayerExperts::weight_bytes() const {
    uint64_t n = 0;
    for (const CpuExpertV2 &e : experts_) n += e.gate.byte_len + e.up.byte_len + e.down.byte_len;
    return n;
}

}  // namespace memra::gguf_tool
