#include "read_loop.h"

#include <immintrin.h>

namespace memra::bench {
namespace {

// Compiled for AVX2 whatever the build's baseline; only called after the runtime check.
__attribute__((target("avx2"))) uint64_t read_avx2(const uint8_t *p, size_t n) {
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = 0; i < n; i += 128) {
        a0 = _mm256_xor_si256(a0, _mm256_load_si256(reinterpret_cast<const __m256i *>(p + i)));
        a1 = _mm256_xor_si256(a1, _mm256_load_si256(reinterpret_cast<const __m256i *>(p + i + 32)));
        a2 = _mm256_xor_si256(a2, _mm256_load_si256(reinterpret_cast<const __m256i *>(p + i + 64)));
        a3 = _mm256_xor_si256(a3, _mm256_load_si256(reinterpret_cast<const __m256i *>(p + i + 96)));
    }
    const __m256i a = _mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3));
    return uint64_t(_mm256_extract_epi64(a, 0) ^ _mm256_extract_epi64(a, 1) ^
                    _mm256_extract_epi64(a, 2) ^ _mm256_extract_epi64(a, 3));
}

uint64_t read_scalar64(const uint8_t *p, size_t n) {
    const uint64_t *q = reinterpret_cast<const uint64_t *>(p);
    uint64_t a[8] = {};
    for (size_t i = 0; i < n / 8; i += 8)
        for (int k = 0; k < 8; ++k) a[k] += q[i + size_t(k)];
    return a[0] ^ a[1] ^ a[2] ^ a[3] ^ a[4] ^ a[5] ^ a[6] ^ a[7];
}

// libgcc's check includes the OS's YMM state (XGETBV), not only the CPUID bit.
bool have_avx2() { return __builtin_cpu_supports("avx2"); }

}  // namespace

uint64_t read_all(const uint8_t *p, size_t n) { return have_avx2() ? read_avx2(p, n) : read_scalar64(p, n); }

const char *read_loop_name() { return have_avx2() ? "avx2" : "scalar64"; }

}  // namespace memra::bench
