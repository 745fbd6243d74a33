// Test parameter names shared by the truth suites: a qtype by ggml's spelling.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "formats.h"

namespace memra::truth {

inline std::string qtype_param_name(const ::testing::TestParamInfo<int32_t> &info) {
    return expertkit::qtype_name(info.param);
}

}  // namespace memra::truth
