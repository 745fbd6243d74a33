// Files the benchmarks read: written once, synced so that their pages are clean and can be
// dropped from the page cache, and removed when the object goes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace memra::bench {

class TestFile {
public:
    // Creates dir/memra-bench-<pid>-<tag>.bin holding the bytes, fsync'ed, read-only fd kept open.
    // Throws std::runtime_error (with the path and errno's text) on any failure.
    TestFile(const std::string &dir, const std::string &tag, const uint8_t *bytes, size_t size);
    ~TestFile();
    TestFile(const TestFile &) = delete;
    TestFile &operator=(const TestFile &) = delete;

    int fd() const { return fd_; }
    const std::string &path() const { return path_; }
    size_t size() const { return size_; }
    // Whether dropping the page cache means anything here (not on tmpfs, whose pages are memory).
    bool droppable() const { return droppable_; }

private:
    std::string path_;
    int fd_ = -1;
    size_t size_ = 0;
    bool droppable_ = true;
};

// posix_fadvise(POSIX_FADV_DONTNEED) over the whole file: its clean pages leave the page cache.
void drop_page_cache(int fd);

// pread until n bytes are read at offset; throws std::runtime_error on error or end of file.
void pread_exact(int fd, uint8_t *dst, size_t n, uint64_t offset);

}  // namespace memra::bench
