// Readable names for parameterised tests ("Accuracy/EveryFormat.Rows/q4_K"), so that ctest lists
// and failure reports say which format or case failed.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "formats.h"

namespace memra::tests {

// Parameter = a qtype id: ggml's spelling of it.
inline std::string qtype_param_name(const ::testing::TestParamInfo<int32_t> &info) {
    return expertkit::qtype_name(info.param);
}

// Parameter = a struct with a `name` field.
template <typename Case>
std::string case_param_name(const ::testing::TestParamInfo<Case> &info) {
    return std::string(info.param.name);
}

}  // namespace memra::tests
