#include "io.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "error.h"

namespace memra {

void fail_read(int fd, uint64_t offset, size_t length, const std::string &why) {
    fail(MEMRA_STATUS_IO_ERROR, "read of " + std::to_string(length) + " bytes at offset " +
                                    std::to_string(offset) + " from fd " + std::to_string(fd) +
                                    " failed: " + why);
}

void read_exact(int fd, uint64_t offset, size_t length, uint8_t *dst) {
    // Large requests, but below the kernel's per-call cap (about 2 GiB) so one pread never
    // comes back short merely because of its size.
    constexpr size_t kMaxChunk = size_t{1} << 30;
    if (offset > static_cast<uint64_t>(INT64_MAX) - length)
        fail_read(fd, offset, length, "offset + length overflows the file size range");
    size_t done = 0;
    while (done < length) {
        const size_t want = std::min(length - done, kMaxChunk);
        const ssize_t got = ::pread(fd, dst + done, want, static_cast<off_t>(offset + done));
        if (got < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            fail_read(fd, offset, length, std::strerror(err));
        }
        if (got == 0) fail_read(fd, offset, length, "end of file after " + std::to_string(done) + " bytes");
        done += static_cast<size_t>(got);
    }
}

FileIdentity identify_file(int fd, uint64_t offset, size_t length) {
    struct stat st;
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        fail_read(fd, offset, length, std::strerror(err));
    }
    FileIdentity id;
    id.dev = static_cast<uint64_t>(st.st_dev);
    id.ino = static_cast<uint64_t>(st.st_ino);
    id.size = static_cast<uint64_t>(st.st_size);
    id.mtime_ns = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    return id;
}

}  // namespace memra
