// The rows paths' prefetch of the next 16-row tile (simd/panel_driver.h, simd/tile_gemm.h): one
// sequential stream into L2, an equal share per weight block, so that the next tile's row streams
// do not each start cold from DRAM (the per-row prefetch of a tile runs into its own next row at a
// row's end). Measured on the Zen 5 VM (panels, m = 4 from DRAM): 1.7-1.8 token calls with it
// against 1.9-2.2 without; into L1 (T0), two tiles ahead, and without the per-row prefetch were
// slower or even.
#pragma once

#include <cstddef>
#include <cstdint>

#include "simd/common.h"

namespace memra::simd::MEMRA_SIMD_NS {

class NextTilePrefetch {
public:
    // next: the next tile's first byte (its bytes follow in one run), or nullptr for none.
    NextTilePrefetch(const uint8_t *next, size_t bytes, int32_t blocks)
        : next_(next), lines_(next ? (bytes + 63) / 64 : 0), blocks_(size_t(blocks)) {}

    // The share of block b, `half` = 0 for its first half and 1 for the rest: in one burst per
    // block Q6_K's 52 lines stalled the decode (the shares are issued before the decode and before
    // the dots, so each burst is half as long).
    void share(int32_t b, int half) {
        const size_t end = lines_ * size_t(b + 1) / blocks_;
        const size_t upto = half == 0 ? line_ + (end - line_) / 2 : end;
        for (; line_ < upto; ++line_) _mm_prefetch(reinterpret_cast<const char *>(next_ + 64 * line_), _MM_HINT_T1);
    }

private:
    const uint8_t *next_;
    size_t lines_, blocks_, line_ = 0;
};

}  // namespace memra::simd::MEMRA_SIMD_NS
