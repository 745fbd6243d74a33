// The ceilings the library is measured against: this machine's DRAM read bandwidth (a buffer far
// larger than the last-level cache, read by 1..N threads) and the pread throughput of a file
// whose pages were dropped from the page cache.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "page_buffer.h"
#include "sampler.h"

namespace memra::bench {

// The read bandwidth at one thread count: the best of read_loops() (read_loop.h).
struct ReadCeiling {
    Summary seconds;   // the best loop's, to read the whole buffer once
    std::string loop;  // its name
    std::vector<std::pair<std::string, double>> loop_medians;  // every loop's median seconds, in read_loops() order
};

// `threads` threads (a team started once, released together for each sample) read the whole
// buffer, each its own contiguous slice, with every loop of read_loops(), reps alternating so
// that a change of load during the measurement touches all loops alike; the loop with the
// shortest median wins.
ReadCeiling measure_read_bandwidth(const PageBuffer &buffer, int threads, const StopRule &rule);

// Seconds to pread the whole file at path (bytes long) in `request`-byte calls, from a cold page
// cache (posix_fadvise(POSIX_FADV_DONTNEED) before every pass).
Summary measure_cold_pread(const std::string &path, size_t bytes, size_t request, const StopRule &rule);

}  // namespace memra::bench
