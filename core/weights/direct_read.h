// Reads through an O_DIRECT descriptor (docs/file-weights.md, "O_DIRECT descriptors" and "Direct
// I/O"): offsets, lengths and memory must be aligned to the device's block, GGUF offsets are not,
// so whole aligned blocks are read into aligned bounce buffers and the bytes asked for copied out.
// Without the page cache there is no readahead: a read of more than one request keeps several
// requests in flight (positioned reads from helper threads), or the device idles between them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memra {

// The rest of the read of `length` bytes at `offset` into `dst`, from byte `done` on, through the
// O_DIRECT descriptor `fd`. Throws like read_exact (io.h), naming `named_fd`, the whole read's
// offset and length, and the first failure in file order: its errno text, or "end of file after N
// bytes" with N the bytes of the read that are in `dst`.
void read_direct(int fd, int named_fd, uint64_t offset, size_t length, uint8_t *dst, size_t done);

// Requests in flight per read (the calling thread and depth - 1 helpers), and the request size
// above which a read is split. Exposed for the tests, which check reads of every shape.
constexpr int kDirectDepth = 4;
constexpr size_t kDirectRequest = size_t{1} << 20;

}  // namespace memra
