// What every fuzz target of this folder needs: exact-size heap buffers (so AddressSanitizer flags
// the first byte read or written past what the code was given), a stream of bytes that never runs
// dry, floats made from fuzz bytes, and the one comparison of results the targets share.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace memra::fuzz {

// Reports a broken property and aborts, which libFuzzer records as a crash with this input.
[[noreturn]] inline void violated(const char *what) {
    std::fprintf(stderr, "memra fuzz: property violated: %s\n", what);
    std::abort();
}

inline void check(bool ok, const char *what) {
    if (!ok) violated(what);
}

// The fuzz input's remaining bytes, repeated as often as needed (zeros when there are none), so
// that the shapes chosen by the first bytes always get their full weights and activations.
class ByteCycle {
public:
    explicit ByteCycle(std::vector<uint8_t> pool) : pool_(std::move(pool)) {}
    uint8_t next() { return pool_.empty() ? 0 : pool_[pos_++ % pool_.size()]; }
    void fill(uint8_t *out, size_t n) {
        for (size_t i = 0; i < n; ++i) out[i] = next();
    }

private:
    std::vector<uint8_t> pool_;
    size_t pos_ = 0;
};

// How activations are made from bytes: raw float32 bit patterns (NaN, inf, subnormals, 1e38),
// small integers times a power of two (the values real activations look like), or a mix with a
// few special values planted among ordinary ones.
enum class FloatMode : uint8_t { kRawBits, kScaledInts, kSpecials };

inline float next_float(ByteCycle &bytes, FloatMode mode, int exponent) {
    switch (mode) {
    case FloatMode::kRawBits: {
        uint32_t u = 0;
        for (int i = 0; i < 4; ++i) u |= uint32_t(bytes.next()) << (8 * i);
        float f;
        std::memcpy(&f, &u, sizeof f);
        return f;
    }
    case FloatMode::kScaledInts:
        return std::ldexp(float(int8_t(bytes.next())), exponent);
    case FloatMode::kSpecials: {
        const uint8_t b = bytes.next();
        static const float kSpecial[] = {NAN, -NAN, INFINITY, -INFINITY, 3.4e38f, -3.4e38f, 1e-45f, -0.0f};
        return (b & 0xE0) == 0xE0 ? kSpecial[b & 7] : float(int8_t(b)) / 16.0f;
    }
    }
    return 0.0f;
}

// Results compare bit for bit, except that any NaN equals any NaN: the kernels' contract is
// bit-exactness on the finite results ggml defines; which NaN payload an IEEE operation returns
// when both operands are NaN is the hardware's choice, not the formats'.
inline bool same_result(float a, float b) {
    uint32_t ua, ub;
    std::memcpy(&ua, &a, 4);
    std::memcpy(&ub, &b, 4);
    return ua == ub || (std::isnan(a) && std::isnan(b));
}

}  // namespace memra::fuzz
