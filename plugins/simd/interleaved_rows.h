// Tests only: a weight layout of a plugin's own (memra/backend.h, memra_kernel_v2::layout), the
// same bytes as ggml's with the rows of each group of G interleaved byte by byte (byte i of the
// group's row r at i * g + r, g the group's rows: G, or fewer in a last group). Fed the file's
// bytes unrepacked, its kernels compute garbage, which is the point: the core's repack path (the
// weight cache's repacked entries, tiles on whole groups) must hand them exactly the repacked
// bytes. One template serves every format: the kernels undo the interleaving into a buffer and
// call the SIMD family's kernels on it (plugins/rows_interleaved).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace memra::simd {

using GemvFn = void (*)(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, float *y);
using GemmFn = void (*)(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq,
                        size_t xq_stride, int32_t m, float *y, size_t ldy);

template <int32_t G>
struct InterleavedRows {
    static_assert(G >= 2 && G <= 64, "a row group of the plugin interface");
    // Named after the build ('I','L','V'), and its group size.
    static constexpr uint32_t kLayout = (uint32_t('I') << 24) | (uint32_t('L') << 16) | (uint32_t('V') << 8) | uint32_t(G);

    // `rows` rows at `from`, in whole groups from the first (the last may be partial), into `to`:
    // interleaved (pack) or back to ggml's layout.
    static void shuffle(const uint8_t *from, size_t row_bytes, int32_t rows, uint8_t *to, bool pack) {
        for (int32_t base = 0; base < rows; base += G) {
            const size_t g = size_t(std::min(G, rows - base));
            const uint8_t *s = from + size_t(base) * row_bytes;
            uint8_t *d = to + size_t(base) * row_bytes;
            for (size_t r = 0; r < g; ++r)
                for (size_t i = 0; i < row_bytes; ++i) {
                    if (pack)
                        d[i * g + r] = s[r * row_bytes + i];
                    else
                        d[r * row_bytes + i] = s[i * g + r];
                }
        }
    }

    static void repack(const uint8_t *src, size_t row_bytes, int32_t rows, int32_t, uint8_t *dst) {
        shuffle(src, row_bytes, rows, dst, true);
    }

    template <GemvFn Inner>
    static void gemv(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, float *y) {
        std::vector<uint8_t> ggml(row_bytes * size_t(rows));
        shuffle(w, row_bytes, rows, ggml.data(), false);
        Inner(ggml.data(), row_bytes, rows, n, xq, y);
    }

    template <GemmFn Inner>
    static void gemm(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, size_t xq_stride,
                     int32_t m, float *y, size_t ldy) {
        std::vector<uint8_t> ggml(row_bytes * size_t(rows));
        shuffle(w, row_bytes, rows, ggml.data(), false);
        Inner(ggml.data(), row_bytes, rows, n, xq, xq_stride, m, y, ldy);
    }
};

}  // namespace memra::simd
