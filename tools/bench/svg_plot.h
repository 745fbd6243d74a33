// --plot: the token path as a roofline picture, a self-contained SVG written here (no library):
// the measured read bandwidth of each thread count as a dashed ceiling line, and per format one
// bar per plugin at the largest thread count (dots for the smaller ones), so the gap between
// achieved GB/s and the ceiling is seen at a glance.
#pragma once

#include <string>

#include "report.h"

namespace memra::bench {

std::string roofline_svg(const Report &report);

}  // namespace memra::bench
