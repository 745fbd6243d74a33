// Experts that cover every format of the list between them: expert i has the formats 3i, 3i+1
// and 3i+2 (mod the format count) of expertkit::all_qtypes() as gate, up and down, so any
// format_mix_cover() consecutive experts hold every format, each projection kind seeing several.
#pragma once

#include <cstddef>
#include <vector>

#include "expert_set.h"
#include "formats.h"

namespace memra::tests {

inline expertkit::ExpertSpec format_mix_spec(size_t i, float route_weight = 1.0f) {
    static const std::vector<int32_t> q = expertkit::all_qtypes();
    const size_t n = q.size();
    return expertkit::ExpertSpec{q[(3 * i) % n], q[(3 * i + 1) % n], q[(3 * i + 2) % n], 1.0f, 1.0f, 1.0f, route_weight};
}

// How many consecutive experts of the mix hold every format: 4 for 12 formats, 5 for 13.
inline size_t format_mix_cover() { return (expertkit::all_qtypes().size() + 2) / 3; }

// `count` experts starting at cycle position `first`, route weights alternating in sign.
inline std::vector<expertkit::ExpertSpec> format_mix(size_t first, size_t count) {
    std::vector<expertkit::ExpertSpec> specs;
    for (size_t i = 0; i < count; ++i) specs.push_back(format_mix_spec(first + i, i % 2 ? -0.45f : 0.7f));
    return specs;
}

}  // namespace memra::tests
