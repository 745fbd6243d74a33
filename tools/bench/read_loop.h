// The loops that measure this machine's read bandwidth: every byte is loaded and folded into a
// result the caller keeps, so the compiler cannot elide them. No single loop is the ceiling on
// every CPU (on the 16-core Intel host memra's own token call read 145 GB/s where the one 256-bit
// loop read 104), so several are measured and the best counts: the widest loads the CPU (and
// OS) runs, 512-bit with AVX-512, 256-bit with AVX2, else 128-bit; one or two sequential streams
// per thread (two: the slice's halves read side by side, as a kernel reads several weight rows);
// with and without software prefetch 4 KiB ahead into L2 (the distance the kernels use,
// plugins/simd/common.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace memra::bench {

struct ReadLoop {
    const char *name;  // e.g. "avx512-2s-pf": load width, streams per thread, software prefetch
    // Folds bytes [p, p + n) into a checksum; n a multiple of 4096, p 64-byte aligned.
    uint64_t (*read)(const uint8_t *p, size_t n);
};

// The loops this CPU runs: 1 and 2 streams, without and with prefetch, at its widest loads.
const std::vector<ReadLoop> &read_loops();

// "avx512", "avx2" or "sse2": the load width of read_loops() on this CPU.
const char *read_loop_width();

}  // namespace memra::bench
