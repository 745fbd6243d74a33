// Positioned reads of weight bytes from the engine's GGUF file descriptors: never moves the
// caller's file offset, never closes its fd, survives EINTR and short reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace memra {

// Reads exactly `length` bytes at `offset` of `fd` into `dst`, or throws memra::Error with
// status 3 naming the errno text (or end of file), the offset and the length. `dst` may have
// been partly written when it throws.
void read_exact(int fd, uint64_t offset, size_t length, uint8_t *dst);

// What a file is, as far as cached bytes are concerned: the inode, and the size and modification
// time that change when it is rewritten in place (a file replaced under its path has another
// inode, or the same inode number reused with another time). Not ctime: it also changes when
// nothing of the content does (a rename, a link, an unlink of the open file).
struct FileIdentity {
    uint64_t dev = 0, ino = 0, size = 0;
    int64_t mtime_ns = 0;
    bool operator==(const FileIdentity &o) const {
        return dev == o.dev && ino == o.ino && size == o.size && mtime_ns == o.mtime_ns;
    }
};

// fstat of `fd`; throws status 3 like read_exact (the read of `length` bytes at `offset` is
// what could not be done) when the fd is not open.
FileIdentity identify_file(int fd, uint64_t offset, size_t length);

// Throws status 3: "read of <length> bytes at offset <offset> from fd <fd> failed: <why>".
[[noreturn]] void fail_read(int fd, uint64_t offset, size_t length, const std::string &why);

}  // namespace memra
