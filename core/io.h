// Positioned reads of weight bytes from the engine's GGUF file descriptors: never moves the
// caller's file offset, never closes its fd, survives EINTR and short reads.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memra {

// Reads exactly `length` bytes at `offset` of `fd` into `dst`, or throws memra::Error with
// status 3 naming the errno text (or end of file), the offset and the length.
void read_exact(int fd, uint64_t offset, size_t length, uint8_t *dst);

}  // namespace memra
