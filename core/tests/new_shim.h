// operator new failures on demand: the test executable replaces the global operator new and
// delete (over malloc and free), and an armed fault makes them throw std::bad_alloc (nothrow
// forms: return null) in the library as in the test. Two ways: the n-th allocation of this
// thread from now on (a sweep over n reaches every allocation of a call in turn), or every
// allocation of the other threads (the prefetch worker's).
#pragma once

#include <cstdint>

namespace memra::tests {

// RAII: armed for the object's lifetime.
class ArmedNewFault {
public:
    static ArmedNewFault nth_on_this_thread(uint64_t n);
    static ArmedNewFault every_on_other_threads();
    ~ArmedNewFault();
    ArmedNewFault(ArmedNewFault &&other) noexcept;
    ArmedNewFault(const ArmedNewFault &) = delete;
    ArmedNewFault &operator=(const ArmedNewFault &) = delete;
    uint64_t faults() const;  // allocations it refused

private:
    ArmedNewFault() = default;
    bool armed_ = true;
};

}  // namespace memra::tests
