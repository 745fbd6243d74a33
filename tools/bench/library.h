// libmemra-cpu-experts as the engine sees it: dlopen'ed by path, entry points by dlsym
// (tools/common/abi_loader.h), every failed call turned into an exception carrying the library's
// message, so that the measurement code reads as a sequence of calls.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "abi_loader.h"

namespace memra::bench {

struct CacheCounters {
    uint64_t hits = 0, misses = 0, read_bytes = 0, resident_bytes = 0;
};

// A call that returned a nonzero status.
struct CallFailed : std::runtime_error {
    CallFailed(int32_t status_code, const std::string &message)
        : std::runtime_error(message), status(status_code) {}
    int32_t status;
};

class Library {
public:
    // Throws std::runtime_error when the library cannot be loaded.
    explicit Library(const std::string &path);
    ~Library();
    Library(const Library &) = delete;
    Library &operator=(const Library &) = delete;

    // The library's describe line ("" when it does not export one).
    std::string describe() const;

    // Each throws CallFailed with the status and the library's message when the call fails.
    void token(const std::vector<CpuExpertV2> &experts, const float *input, float *output, int32_t threads) const;
    void rows(const CpuExpertV2 &expert, const float *inputs, int32_t rows, const float *route_weights,
              float *outputs, int32_t threads) const;
    void prefetch(const std::vector<CpuProjectionV2> &projections) const;
    CacheCounters cache() const;

private:
    memra_loaded_abi abi_{};
};

// Which plugin serves `format` according to a describe line ("memra-cpu-experts: backend B ...;
// f32,q4_0: avx512; q2_K: scalar; plugins: ..."); "" when the line does not say.
std::string served_by(const std::string &describe_line, const std::string &format);

}  // namespace memra::bench
