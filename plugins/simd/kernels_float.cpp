// F32 and BF16 for this ISA build.
#include "simd/formats_bf16.h"
#include "simd/formats_float.h"
#include "simd/kernels.h"

namespace memra::simd::MEMRA_SIMD_NS {
static_assert(F32::kElemBytes == size_t(memra::formats::f32.block_bytes) && memra::formats::f32.block_elems == 1);
static_assert(memra::formats::bf16.block_bytes == 2 && memra::formats::bf16.block_elems == 1);

void gemv_f32(const uint8_t *w, size_t rb, int32_t rows, int32_t n, const void *xq, float *y) {
    float_gemv<F32>(w, rb, rows, n, xq, y);
}
void gemm_f32(const uint8_t *w, size_t rb, int32_t rows, int32_t n, const void *xq, size_t xs, int32_t m,
              float *y, size_t ldy) {
    float_gemm<F32>(w, rb, rows, n, xq, xs, m, y, ldy);
}
void gemv_bf16(const uint8_t *w, size_t rb, int32_t rows, int32_t n, const void *xq, float *y) {
    bf16_gemv(w, rb, rows, n, xq, y);
}
void gemm_bf16(const uint8_t *w, size_t rb, int32_t rows, int32_t n, const void *xq, size_t xs, int32_t m,
               float *y, size_t ldy) {
    bf16_gemm(w, rb, rows, n, xq, xs, m, y, ldy);
}
}  // namespace memra::simd::MEMRA_SIMD_NS
