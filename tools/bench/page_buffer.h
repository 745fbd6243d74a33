// Large anonymous memory for the benchmarks: mmap'ed, 2 MiB aligned, with transparent huge pages
// asked for (MADV_HUGEPAGE) or refused (MADV_NOHUGEPAGE), and pre-faulted by writing every page,
// so that no measurement pays for page faults and no read is served by the shared zero page.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memra::bench {

class PageBuffer {
public:
    // Throws std::runtime_error (with errno's text) when the mapping fails.
    PageBuffer(size_t bytes, bool hugepages);
    ~PageBuffer();
    PageBuffer(const PageBuffer &) = delete;
    PageBuffer &operator=(const PageBuffer &) = delete;

    uint8_t *data() const { return data_; }
    size_t size() const { return size_; }

private:
    uint8_t *base_ = nullptr;  // the mapping, larger than size_ by the alignment slack
    size_t mapped_ = 0;
    uint8_t *data_ = nullptr;
    size_t size_ = 0;
};

}  // namespace memra::bench
