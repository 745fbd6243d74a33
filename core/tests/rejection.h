// What every rejected call must do (CONTRACT.md, "Validation"): the expected status; a message
// that names the expert, projection, field and value; untouched output; an error buffer filled
// only within error_len and always NUL-terminated; tolerance of error == NULL / error_len == 0.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace memra::tests {

struct Rejection {
    int32_t status;
    // Case-insensitive substrings the message must contain: the field, the projection, the
    // offending value where it is distinctive.
    std::vector<std::string> mentions;
    // The expert index the message must name ("expert 2", "experts[2]"), or -1.
    int32_t expert = -1;
};

// Runs the failing call with the given error buffer and returns its status. It must write the
// output (if any) into the buffer check_rejection watches.
using FailingCall = std::function<int32_t(char *error, size_t error_len)>;

// Calls `call` several times with different error buffers and checks all of the above. `watched`
// is every byte the call may not change (the output with its guard zone, the experts, the input).
void check_rejection(const FailingCall &call, const Rejection &expected,
                     const std::vector<std::pair<const void *, size_t>> &watched);

}  // namespace memra::tests
