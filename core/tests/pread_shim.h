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
    enum class Kind { kFailAt, kShortReads, kEintrStorm, kSlow, kChangeMidRead };
    Kind kind = Kind::kFailAt;
    int fd = -1;             // the file: reads of its inode through any fd
    uint64_t offset = 0;     // kFailAt: a read covering this byte fails
    int error = 0;           // kFailAt: with this errno
    size_t max_bytes = 0;    // kShortReads: at most this much per call
    unsigned delay_us = 0;   // kSlow: each read of the file sleeps this long first
    // kChangeMidRead: a read of the file gets the first half of what it asked for, then
    // change(context) runs (it modifies the file) and the read returns that short count, so that
    // the reader's next read continues in the changed file: a read torn by a change, on demand.
    // For the first `changes` reads (0: every read).
    void (*change)(void *context) = nullptr;
    void *context = nullptr;
    uint64_t changes = 0;
};

// RAII: armed for the object's lifetime.
class ArmedPreadFault {
public:
    explicit ArmedPreadFault(const PreadFault &fault);
    ~ArmedPreadFault();
    ArmedPreadFault(const ArmedPreadFault &) = delete;
    ArmedPreadFault &operator=(const ArmedPreadFault &) = delete;
    uint64_t faults() const;  // how many calls it failed, shortened or slowed
    uint64_t reads() const;   // how many reads of the file it has seen (begun)
};

}  // namespace memra::tests
