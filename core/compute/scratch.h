// Per-thread scratch memory for a call: activations, intermediate rows and outputs live here, so
// that a call in steady state allocates nothing. Each engine thread has its own arena (calls on
// different threads never share one); a call's helper threads write into the caller's arena.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace memra {

// 64-byte aligned (the widest SIMD load), sized to the largest request so far (rounded up to 64
// bytes, or to a page for a mapped one) and never shrunk; given back to the system when destroyed,
// e.g. when its thread exits. So a thread's buffers are bounded by its largest call's needs (its
// streamed file weights, its scratch), not by twice that as when they grew by doubling.
//
// From kMapBytes on, the memory is mapped directly rather than taken from malloc: glibc's
// per-thread arenas keep what a thread frees, also after the thread exited, so a storm of
// short-lived calling threads grew RSS by ~150 MiB while the heap in use stayed under 1 MiB
// (docs/hardening.md, "The host process"); an unmapped buffer is gone. A mapped buffer grows with
// mremap (its pages move along, only the new part is faulted in). Sanitizer builds take every
// buffer from malloc (scratch.cpp says why).
class AlignedBuffer {
public:
    static constexpr size_t kMapBytes = size_t{128} << 10;  // glibc's own initial mmap threshold

    AlignedBuffer() = default;
    AlignedBuffer(const AlignedBuffer &) = delete;
    AlignedBuffer &operator=(const AlignedBuffer &) = delete;
    ~AlignedBuffer() { release(); }

    // At least `bytes` usable bytes; contents are not preserved across growth. Throws
    // std::bad_alloc when the memory cannot be had (the buffer is then empty).
    uint8_t *reserve(size_t bytes) {
        if (bytes > capacity_) grow(bytes);
        return data_;
    }
    size_t capacity() const { return capacity_; }

private:
    void grow(size_t bytes);
    void release() noexcept;

    uint8_t *data_ = nullptr;
    size_t capacity_ = 0;
    bool mapped_ = false;
};

// Carves one call's regions out of a single buffer. Sizes are summed first (plan), then the
// buffer is reserved once and the regions handed out (carve), so there is one allocation at most.
class ScratchLayout {
public:
    // Registers a region and returns its offset.
    size_t add(size_t bytes) {
        const size_t offset = total_;
        total_ += (bytes + 63) & ~size_t{63};
        return offset;
    }
    size_t total() const { return total_; }

private:
    size_t total_ = 0;
};

AlignedBuffer &thread_scratch();

}  // namespace memra
