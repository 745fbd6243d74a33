// The ceilings the library is measured against: this machine's DRAM read bandwidth (a buffer far
// larger than the last-level cache, read by 1..N threads) and the pread throughput of a file
// whose pages were dropped from the page cache.
#pragma once

#include <cstddef>
#include <string>

#include "page_buffer.h"
#include "sampler.h"

namespace memra::bench {

// Seconds for `threads` threads to read the whole buffer once (each its own contiguous slice).
Summary measure_read_bandwidth(const PageBuffer &buffer, int threads, const StopRule &rule);

// Seconds to pread the whole file at path (bytes long) in `request`-byte calls, from a cold page
// cache (posix_fadvise(POSIX_FADV_DONTNEED) before every pass).
Summary measure_cold_pread(const std::string &path, size_t bytes, size_t request, const StopRule &rule);

}  // namespace memra::bench
