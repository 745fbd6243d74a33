// The machine's first-touch rate: how fast fresh anonymous memory is faulted in and written for
// the first time. A cache that grows into fresh memory inside a call can never beat it, so a
// first pass over a page-cached file is compared with it, measured in the same run (issue 18).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace memra::bench {

// Regions of fresh anonymous memory, each touched once and all kept mapped until this object
// goes, as a growing cache keeps its memory: a region unmapped between samples is handed straight
// back to the next one, pages the hypervisor already backs, which on the development VM measured
// 15-40x faster than memory the process takes anew. And whether memory comes anew or recycled
// depends on what ran before (the previous run's memory, once freed, is fast again), so
// file_path.cpp touches one region just before each first-pass call: both draw from the same
// state of the kernel's free memory (docs/file-weights.md, "What a first pass can reach").
class FreshMemory {
public:
    FreshMemory();
    ~FreshMemory();
    FreshMemory(const FreshMemory &) = delete;
    FreshMemory &operator=(const FreshMemory &) = delete;

    // Seconds to fault in `bytes` of new memory and write every byte once (as a read into a cache
    // chunk does), mapped at a 2 MiB boundary, advised MADV_HUGEPAGE or MADV_NOHUGEPAGE and
    // populated as the library's slabs are; the mapping is not timed. Throws std::runtime_error
    // when the mapping fails.
    double touch(size_t bytes, bool hugepages);

private:
    struct Region;
    std::vector<std::unique_ptr<Region>> kept_;
};

}  // namespace memra::bench
