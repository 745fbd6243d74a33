// A file-backed matrix put into the layout of the kernel that will read it (memra/backend.h,
// memra_kernel_v2::layout and repack), once, where its bytes were read: in the weight cache's
// entry (so every later call and the prefetcher find it repacked) or, when the cache could not
// take it, in the call's streaming memory. The layout is the same size as ggml's and its groups
// of rows are independent, so the matrix is repacked in place, piece by piece, through a small
// per-thread buffer rather than through a second copy of the whole matrix.
#pragma once

#include <cstddef>
#include <cstdint>

#include "memra/backend.h"

namespace memra {

// Whether bytes for `kernel` must be repacked (nullptr or ggml's layout: no).
inline bool needs_repack(const memra_kernel_v2 *kernel) {
    return kernel && kernel->layout != MEMRA_LAYOUT_GGML;
}

// The layout the bytes for `kernel` are kept in (the weight cache's CacheKey::layout).
inline uint32_t layout_of(const memra_kernel_v2 *kernel) {
    return kernel ? kernel->layout : MEMRA_LAYOUT_GGML;
}

// `bytes`: `rows` rows of `row_bytes` (n values each) in ggml's layout; afterwards in `kernel`'s.
// Throws status 4 (out of memory, naming the layout and the size) when this thread's repack
// buffer cannot be had; the bytes are then untouched.
void repack_in_place(const memra_kernel_v2 &kernel, uint8_t *bytes, size_t row_bytes, int32_t rows, int32_t n);

}  // namespace memra
