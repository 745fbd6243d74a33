// File-backed weights for tests: writes projections' bytes into a file at deliberately unaligned
// offsets and points their descriptors at it (file_fd, file_offset; weights = NULL), and reads
// the library's cache counters.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "memra/cpu_experts.h"

namespace memra::tests {

// Every projection of these experts, for WeightsFile.
std::vector<CpuProjectionV2 *> projections_of(std::vector<CpuExpertV2> &experts);

class WeightsFile {
public:
    // `path` empty: an unlinked temporary file. Otherwise the file is created (replaced) there.
    explicit WeightsFile(const std::vector<CpuProjectionV2 *> &projections, const std::string &path = "");
    WeightsFile(const WeightsFile &) = delete;
    WeightsFile &operator=(const WeightsFile &) = delete;
    ~WeightsFile();
    int fd() const { return fd_; }
    uint64_t size() const { return size_; }  // where the last projection ends
    uint64_t bytes() const { return bytes_; }  // the projections' bytes, together
    // Closes this object's fd (the descriptors keep naming the old number).
    void close_fd();

private:
    int fd_ = -1;
    uint64_t size_ = 0, bytes_ = 0;
};

// hits, misses, read_bytes, resident_bytes.
using CacheCounters = std::array<uint64_t, 4>;
CacheCounters cache_counters();
// Field-wise after - before (resident_bytes as a signed change, stored modulo 2^64).
CacheCounters operator-(const CacheCounters &after, const CacheCounters &before);

}  // namespace memra::tests
