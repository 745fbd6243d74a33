#include "first_touch.h"

#include <sys/mman.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace memra::bench {
namespace {

constexpr size_t kHugePage = size_t(2) << 20;

double touch_once(size_t bytes, bool hugepages) {
    // Over-mapped by a huge page and started at a 2 MiB boundary, as the library's slabs are, so
    // that huge pages can back all of it.
    const size_t mapped = bytes + kHugePage;
    void *p = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        throw std::runtime_error("mmap of " + std::to_string(mapped) + " bytes: " + std::strerror(errno));
    const uintptr_t base = reinterpret_cast<uintptr_t>(p);
    uint8_t *data = reinterpret_cast<uint8_t *>((base + kHugePage - 1) & ~(kHugePage - 1));
    // Advice only: where THP is `never` both cases get 4 KiB pages, which the numbers then show.
    (void)::madvise(data, bytes, hugepages ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    const auto t0 = std::chrono::steady_clock::now();
    std::memset(data, 0x5a, bytes);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ::munmap(p, mapped);
    return s;
}

}  // namespace

Summary measure_first_touch(size_t bytes, bool hugepages, const StopRule &rule) {
    return sample_until_stable(rule, [&] { return touch_once(bytes, hugepages); });
}

}  // namespace memra::bench
