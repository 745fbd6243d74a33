// A read loop the compiler cannot elide and that runs at DRAM speed: every byte is loaded and
// folded into a result the caller keeps. 256-bit loads when the CPU (and OS) support AVX2, else
// 64-bit loads into eight independent accumulators (enough loads in flight to saturate memory).
#pragma once

#include <cstddef>
#include <cstdint>

namespace memra::bench {

// Folds bytes [p, p + n) into a checksum; n a multiple of 256, p 32-byte aligned.
uint64_t read_all(const uint8_t *p, size_t n);

// "avx2" or "scalar64": which loop read_all runs on this CPU.
const char *read_loop_name();

}  // namespace memra::bench
