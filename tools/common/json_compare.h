// Whether a tool's JSON document is the one it was: the tests that hold memra-bench's and
// memra-conformance's output to what the hand-written writer produced before nlohmann-json
// replaced it (fixtures saved from that writer), and to the documents' schemas since.
#pragma once

#include <string>

#include "json.h"

namespace memra::tools {

enum class JsonMatch {
    // The same keys in the same order, the same kinds, equal strings and booleans, numbers within
    // 1e-8 relative (the old writer printed 9 significant digits), arrays element by element.
    Values,
    // The same keys in the same order and the same kinds; every array element shaped like some
    // element of the other side's array (a machine has more or fewer backends, features, searched
    // directories), each side's elements checked when both are non-empty.
    Shape,
};

// "" when actual matches expected, else the path of the first difference and what it is.
std::string json_difference(const Json &expected, const Json &actual, JsonMatch how);

}  // namespace memra::tools
