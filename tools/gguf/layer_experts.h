// A layer's experts as the engine hands them to the library: one CpuExpertV2 per selected expert,
// each projection pointing at that expert's slice of the merged 3-D tensor, either in memory (the
// mapped file) or in the file (file_fd + file_offset).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gguf_file.h"
#include "memra/cpu_experts.h"
#include "moe_layout.h"

namespace memra::gguf_tool {

enum class WeightSource { Memory, File };

class LayerExperts {
public:
    // Throws std::runtime_error when an expert id is out of range or the layer is not usable.
    // With WeightSource::File the file is opened here and closed by the destructor.
    LayerExperts(const gguf::File &file, const gguf::MoeLayer &layer, const std::vector<uint32_t> &ids,
                 const std::vector<float> &route_weights, WeightSource source);
    ~LayerExperts();
    LayerExperts(const LayerExperts &) = delete;
    LayerExperts &operator=(const LayerExperts &) = delete;

    const CpuExpertV2 *data() const { return experts_.data(); }
    int32_t count() const { return int32_t(experts_.size()); }
    // Weight bytes one token reads: every projection of every selected expert.
    uint64_t weight_bytes() const;

private:
    std::vector<CpuExpertV2> experts_;
    int fd_ = -1;
};

}  // namespace memra::gguf_tool
