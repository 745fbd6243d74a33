// Checks of memra-bench's three output files against docs/benchmarks.md ("Output schema"): each
// returns "" when the file conforms, else the first problem found, in one line.
#pragma once

#include <string>

namespace memra::bench {

// The JSON document: required keys with their types, every result a valid record, every --peer
// record with its comparison fields and outputs that meet the bench's agreement rule, and (when
// expect_modes is non-empty, comma-separated) at least one result of each of those modes.
std::string check_json(const std::string &text, const std::string &expect_modes);

// The CSV: the documented header, then rows of as many fields.
std::string check_csv(const std::string &text);

// The SVG: well-formed XML whose root is <svg> in the SVG namespace, with a plot in it (lines,
// rectangles, text).
std::string check_svg(const std::string &text);

}  // namespace memra::bench
