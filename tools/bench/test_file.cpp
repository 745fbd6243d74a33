#include "test_file.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace memra::bench {
namespace {

[[noreturn]] void fail(const std::string &what) {
    throw std::runtime_error(what + ": " + std::strerror(errno));
}

}  // namespace

TestFile::TestFile(const std::string &dir, const std::string &tag, const uint8_t *bytes, size_t size)
    : path_(dir + "/memra-bench-" + std::to_string(getpid()) + "-" + tag + ".bin"), size_(size) {
    const int w = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (w < 0) fail("create " + path_);
    size_t done = 0;
    while (done < size) {
        const ssize_t n = ::write(w, bytes + done, std::min(size - done, size_t(1) << 26));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int err = errno;
            ::close(w);
            ::unlink(path_.c_str());
            errno = err;
            fail("write " + path_);
        }
        done += size_t(n);
    }
    // Dirty pages cannot be dropped: sync them so that DONTNEED really empties the cache.
    if (::fdatasync(w) != 0 || ::close(w) != 0) {
        ::unlink(path_.c_str());
        fail("sync " + path_);
    }
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
        ::unlink(path_.c_str());
        fail("open " + path_);
    }
    struct statfs fs{};
    if (::fstatfs(fd_, &fs) == 0 && fs.f_type == TMPFS_MAGIC) droppable_ = false;
    drop_page_cache(fd_);
}

TestFile::~TestFile() {
    if (fd_ >= 0) ::close(fd_);
    ::unlink(path_.c_str());
}

void drop_page_cache(int fd) { (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED); }

void pread_exact(int fd, uint8_t *dst, size_t n, uint64_t offset) {
    size_t done = 0;
    while (done < n) {
        const ssize_t got = ::pread(fd, dst + done, n - done, off_t(offset + done));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) fail("pread");
        if (got == 0) {
            errno = 0;
            throw std::runtime_error("pread: end of file at offset " + std::to_string(offset + done));
        }
        done += size_t(got);
    }
}

}  // namespace memra::bench
