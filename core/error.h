// The one way a failure travels from deep inside the core to the C boundary: an exception that
// carries the ABI status code and the message the caller will read. abi.cpp catches it (and
// everything else) so nothing ever unwinds through the engine's frames.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "memra/cpu_experts.h"

namespace memra {

class Error : public std::runtime_error {
public:
    Error(int32_t status, const std::string &message) : std::runtime_error(message), status_(status) {}
    int32_t status() const noexcept { return status_; }

private:
    int32_t status_;
};

[[noreturn]] inline void fail(int32_t status, const std::string &message) { throw Error(status, message); }

}  // namespace memra
