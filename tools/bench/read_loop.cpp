#include "read_loop.h"

#include <xmmintrin.h>

namespace memra::bench {
namespace {

constexpr size_t kPrefetchBytes = 4096;

// One loop for every width: GCC's vector extension types compile to the widest registers of the
// function they are inlined into (zmm under target("avx512f"), ymm under "avx2", xmm otherwise).
// Each step loads four vectors (split between the streams) into four accumulators.
template <size_t W>
struct VecOf {
    typedef uint64_t type __attribute__((vector_size(W)));
};

template <size_t W, int Streams, bool Prefetch>
__attribute__((always_inline)) inline uint64_t read_body(const uint8_t *p, size_t n) {
    constexpr int kPerStream = 4 / Streams;
    constexpr size_t kStep = W * kPerStream;  // bytes per stream and step
    using Vec = typename VecOf<W>::type;
    Vec acc[Streams][kPerStream] = {};
    const size_t part = n / Streams;
    for (size_t i = 0; i < part; i += kStep) {
#pragma GCC unroll 2
        for (int s = 0; s < Streams; ++s) {
            const uint8_t *q = p + size_t(s) * part + i;
            if (Prefetch) {
#pragma GCC unroll 4
                for (size_t line = 0; line < kStep; line += 64)
                    _mm_prefetch(reinterpret_cast<const char *>(q + kPrefetchBytes + line), _MM_HINT_T1);
            }
#pragma GCC unroll 4
            for (int k = 0; k < kPerStream; ++k) {
                Vec v;
                __builtin_memcpy(&v, q + size_t(k) * W, W);
                acc[s][k] ^= v;
            }
        }
    }
    uint64_t r = 0;
    for (int s = 0; s < Streams; ++s)
        for (int k = 0; k < kPerStream; ++k)
            for (size_t e = 0; e < W / 8; ++e) r ^= acc[s][k][e];
    return r;
}

#define MEMRA_READ_LOOPS(width, bytes, target_attr)                                                                    \
    target_attr uint64_t width##_1s(const uint8_t *p, size_t n) { return read_body<bytes, 1, false>(p, n); }          \
    target_attr uint64_t width##_1s_pf(const uint8_t *p, size_t n) { return read_body<bytes, 1, true>(p, n); }        \
    target_attr uint64_t width##_2s(const uint8_t *p, size_t n) { return read_body<bytes, 2, false>(p, n); }          \
    target_attr uint64_t width##_2s_pf(const uint8_t *p, size_t n) { return read_body<bytes, 2, true>(p, n); }        \
    const std::vector<ReadLoop> width##_loops{{#width "-1s", width##_1s},                                              \
                                              {#width "-1s-pf", width##_1s_pf},                                        \
                                              {#width "-2s", width##_2s},                                              \
                                              {#width "-2s-pf", width##_2s_pf}};

// Compiled for each width whatever the build's baseline; only called after the runtime check.
MEMRA_READ_LOOPS(avx512, 64, __attribute__((target("avx512f"))))
MEMRA_READ_LOOPS(avx2, 32, __attribute__((target("avx2"))))
MEMRA_READ_LOOPS(sse2, 16, )
#undef MEMRA_READ_LOOPS

// libgcc's checks include the OS's register state (XGETBV), not only the CPUID bits.
bool have_avx512() { return __builtin_cpu_supports("avx512f"); }
bool have_avx2() { return __builtin_cpu_supports("avx2"); }

}  // namespace

const std::vector<ReadLoop> &read_loops() { return have_avx512() ? avx512_loops : have_avx2() ? avx2_loops : sse2_loops; }

const char *read_loop_width() { return have_avx512() ? "avx512" : have_avx2() ? "avx2" : "sse2"; }

}  // namespace memra::bench
