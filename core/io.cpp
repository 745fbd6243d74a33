#include "io.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "error.h"

namespace memra {

void read_exact(int fd, uint64_t offset, size_t length, uint8_t *dst) {
    // Large requests, but below the kernel's per-call cap (about 2 GiB) so one pread never
    // comes back short merely because of its size.
    constexpr size_t kMaxChunk = size_t{1} << 30;
    auto describe = [&](const std::string &why) {
        return "read of " + std::to_string(length) + " bytes at offset " + std::to_string(offset) +
               " from fd " + std::to_string(fd) + " failed: " + why;
    };
    if (offset > static_cast<uint64_t>(INT64_MAX) - length)
        fail(MEMRA_STATUS_IO_ERROR, describe("offset + length overflows the file size range"));
    size_t done = 0;
    while (done < length) {
        const size_t want = std::min(length - done, kMaxChunk);
        const ssize_t got = ::pread(fd, dst + done, want, static_cast<off_t>(offset + done));
        if (got < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            fail(MEMRA_STATUS_IO_ERROR, describe(std::strerror(err)));
        }
        if (got == 0)
            fail(MEMRA_STATUS_IO_ERROR,
                 describe("end of file after " + std::to_string(done) + " bytes"));
        done += static_cast<size_t>(got);
    }
}

}  // namespace memra
