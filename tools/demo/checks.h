// The demo's verdicts on its cases and the table that shows them. Per case (a layer, a call, a
// weight source): the scalar backend's outputs (bit-identical required, gguf_tool::
// Agreement), the expert kit's double-precision references (expertkit::judge's derived
// tolerances), and for the file source the memory source's outputs (the same bytes through the
// same code: bit-identical).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "accuracy.h"
#include "cases.h"
#include "scalar_check.h"

namespace memra::demo {

struct Row {
    const Case *c = nullptr;
    std::string served_by;           // the plugin(s) serving gate, up, down
    double median_us = 0, gbps = 0;  // per call (a token, or a batch of rows); weight bytes / median
    bool scalar_done = false;        // false when the scalar run failed (Report::scalar_failure)
    gguf_tool::Agreement scalar;
    expertkit::Verdict reference;      // the worst token's (largest error relative to its tolerance)
    bool reference_ok = true;
    bool file_equals_memory = true;  // file rows only
    bool ok = false;
};

struct Report {
    std::vector<Row> rows;
    std::string scalar_failure;
    uint64_t file_hits = 0, file_misses = 0, file_read_bytes = 0;
    bool all_passed() const;
};

// scalar: the scalar child's outputs of every case in order (empty with scalar_failure set when
// it failed); served: format -> plugin, from the library's describe line.
Report check(const gguf::File &file, const std::vector<Case> &cases, const std::vector<float> &scalar,
             const std::string &scalar_failure, const std::map<std::string, std::string> &served);

void print(const Report &report);

}  // namespace memra::demo
