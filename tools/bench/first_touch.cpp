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
constexpr int kPopulateWrite = 23;  // MADV_POPULATE_WRITE (Linux 5.14), spelled out for older headers

}  // namespace

// One mapping, over-mapped by a huge page so that its data can start at a 2 MiB boundary.
struct FreshMemory::Region {
    explicit Region(size_t bytes) : mapped(bytes + kHugePage) {
        raw = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (raw == MAP_FAILED)
            throw std::runtime_error("mmap of " + std::to_string(mapped) + " bytes: " + std::strerror(errno));
        data = reinterpret_cast<uint8_t *>((reinterpret_cast<uintptr_t>(raw) + kHugePage - 1) & ~(kHugePage - 1));
    }
    ~Region() { ::munmap(raw, mapped); }
    size_t mapped;
    void *raw;
    uint8_t *data;
};

FreshMemory::FreshMemory() = default;
FreshMemory::~FreshMemory() = default;

double FreshMemory::touch(size_t bytes, bool hugepages) {
    kept_.push_back(std::make_unique<Region>(bytes));
    uint8_t *data = kept_.back()->data;
    // Advice only: where THP is `never` both get 4 KiB pages, which the numbers then show.
    (void)::madvise(data, bytes, hugepages ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    // Faulted in as the library's slabs are (slab_pool.cpp: MADV_POPULATE_WRITE; ignored by
    // kernels before 5.14, where the writes fault it in), then written once, as a read into a
    // cache chunk writes it: on this VM 4 KiB pages fault again in the hypervisor on that first
    // write after populating, so the populate alone would flatter them.
    const auto t0 = std::chrono::steady_clock::now();
    (void)::madvise(data, bytes, kPopulateWrite);
    std::memset(data, 0x5a, bytes);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace memra::bench
