#include "page_buffer.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace memra::bench {
namespace {
constexpr size_t kHugePage = size_t(2) << 20;
}

PageBuffer::PageBuffer(size_t bytes, bool hugepages) : size_(bytes) {
    // Over-map by one huge page and start at the first 2 MiB boundary, so that the whole buffer
    // can be backed by huge pages.
    mapped_ = bytes + kHugePage;
    void *p = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        throw std::runtime_error("mmap of " + std::to_string(mapped_) + " bytes: " + std::strerror(errno));
    base_ = static_cast<uint8_t *>(p);
    const uintptr_t aligned = (reinterpret_cast<uintptr_t>(base_) + kHugePage - 1) & ~(kHugePage - 1);
    data_ = reinterpret_cast<uint8_t *>(aligned);
    // Advice only: a kernel without THP keeps 4 KiB pages, which the measurement then reflects.
    (void)madvise(data_, size_, hugepages ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    // Non-zero bytes: a page only ever read could map the shared zero page and read from cache.
    std::memset(data_, 0x5a, size_);
}

PageBuffer::~PageBuffer() {
    if (base_) munmap(base_, mapped_);
}

}  // namespace memra::bench
