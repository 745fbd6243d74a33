#include "weights/repack.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <string>

#include "error.h"

namespace memra {
namespace {

// A piece of about this many bytes (whole groups, at least one) is copied out and repacked back:
// small enough to stay in the core's cache between the copy and the repack, large enough that
// the calls into the plugin cost nothing.
constexpr size_t kPieceBytes = 256 * 1024;

// This thread's buffer, grown to the largest piece it has needed and kept: a call (or the
// prefetch worker) in steady state allocates nothing.
uint8_t *piece_buffer(size_t bytes) {
    struct Buffer {
        uint8_t *data = nullptr;
        size_t size = 0;
        ~Buffer() { ::operator delete(data, std::align_val_t{64}); }
    };
    thread_local Buffer buffer;
    if (buffer.size < bytes) {
        uint8_t *grown = static_cast<uint8_t *>(::operator new(bytes, std::align_val_t{64}, std::nothrow));
        if (!grown) return nullptr;
        ::operator delete(buffer.data, std::align_val_t{64});
        buffer.data = grown;
        buffer.size = bytes;
    }
    return buffer.data;
}

}  // namespace

void repack_in_place(const memra_kernel_v2 &kernel, uint8_t *bytes, size_t row_bytes, int32_t rows, int32_t n) {
    const int32_t group = std::max(kernel.row_group, 1);
    const size_t group_bytes = row_bytes * static_cast<size_t>(group);
    const int32_t groups_per_piece = static_cast<int32_t>(std::max<size_t>(1, kPieceBytes / std::max<size_t>(group_bytes, 1)));
    const int32_t piece_rows = groups_per_piece * group;
    const size_t buffer_bytes = row_bytes * static_cast<size_t>(std::min(piece_rows, rows));
    uint8_t *piece = piece_buffer(buffer_bytes);
    if (!piece)
        fail(MEMRA_STATUS_OUT_OF_MEMORY, "out of memory: no memory for the " + std::to_string(buffer_bytes) +
                                             "-byte buffer that repacks file weights into layout " +
                                             std::to_string(kernel.layout));
    // Each piece starts at a multiple of the row group and occupies the same bytes repacked
    // (memra/backend.h); the last one reaches the last row.
    for (int32_t r = 0; r < rows; r += piece_rows) {
        const int32_t count = std::min(piece_rows, rows - r);
        uint8_t *at = bytes + static_cast<size_t>(r) * row_bytes;
        std::memcpy(piece, at, static_cast<size_t>(count) * row_bytes);
        kernel.repack(piece, row_bytes, count, n, at);
    }
}

}  // namespace memra
