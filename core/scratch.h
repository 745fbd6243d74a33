// Per-thread scratch memory for a call: activations, intermediate rows and outputs live here, so
// that a call in steady state allocates nothing. Each engine thread has its own arena (calls on
// different threads never share one); OpenMP workers of a call write into the caller's arena.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace memra {

// 64-byte aligned (the widest SIMD load), grown geometrically, never shrunk.
class AlignedBuffer {
public:
    AlignedBuffer() = default;
    AlignedBuffer(const AlignedBuffer &) = delete;
    AlignedBuffer &operator=(const AlignedBuffer &) = delete;
    ~AlignedBuffer() { std::free(data_); }

    // At least `bytes` usable bytes; contents are not preserved across growth.
    uint8_t *reserve(size_t bytes) {
        if (bytes > capacity_) {
            size_t want = capacity_ ? capacity_ : 4096;
            while (want < bytes) want *= 2;
            void *p = std::aligned_alloc(64, want);
            if (!p) throw std::bad_alloc();
            std::free(data_);
            data_ = static_cast<uint8_t *>(p);
            capacity_ = want;
        }
        return data_;
    }

private:
    uint8_t *data_ = nullptr;
    size_t capacity_ = 0;
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
