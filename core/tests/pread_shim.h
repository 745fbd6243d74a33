// Read faults on demand: a definition of pread in the test executable, which the library's
// calls resolve to (an executable's symbols come first in the dynamic linker's lookup), so the
// library under test is the real, unmodified one. Unarmed, it forwards to libc. Armed, it
// affects only reads of one file (matched by inode, so the prefetch worker's duplicated fd is
// affected too).
#pragma once

#include <cstddef>
#include <cstdint>

namespace memra::tests {

struct PreadFault {
    enum class Kind { kFailAt, kShortReads, kEintrStorm };
    Kind kind = Kind::kFailAt;
    int fd = -1;             // the file: reads of its inode through any fd
    uint64_t offset = 0;     // kFailAt: a read covering this byte fails
    int error = 0;           // kFailAt: with this errno
    size_t max_bytes = 0;    // kShortReads: at most this much per call
};

// RAII: armed for the object's lifetime.
class ArmedPreadFault {
public:
    explicit ArmedPreadFault(const PreadFault &fault);
    ~ArmedPreadFault();
    ArmedPreadFault(const ArmedPreadFault &) = delete;
    ArmedPreadFault &operator=(const ArmedPreadFault &) = delete;
    uint64_t faults() const;  // how many calls it failed or shortened
};

}  // namespace memra::tests
