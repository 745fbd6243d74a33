// Waiting for the prefetch worker: polls until a condition holds, for at most 30 s (a loaded
// machine is slow; a lost read never finishes). The answer is whether it held: tests assert
// that, never a timing.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace memra::tests {

inline bool eventually(const std::function<bool()> &done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

}  // namespace memra::tests
