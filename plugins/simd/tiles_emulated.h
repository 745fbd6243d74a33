// The tile layer of simd/tiles_amx.h emulated in AVX-512 code with the same semantics, for the
// test build plugins/amx_emulated: it runs the tile driver (simd/tile_gemm.h) and so proves it
// bit-identical to scalar on any AVX-512 CPU; the AMX build runs the same driver on real tiles.
//   load:  rows x colsb bytes from base + i * stride; the rest of the register zeroed
//   dp:    C[i][n] += sum over k < colsb(A) / 4 of sum_t A[i][4k+t] * B[k][4n+t] (int32, wrapping),
//          for i < rows(C), n < colsb(C) / 4
//   store: rows x colsb bytes to base + i * stride
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "simd/tiles_shape.h"

namespace memra::simd::MEMRA_SIMD_NS {

class Tiles {
public:
    // The emulation runs the tile driver at every m, the ones the AMX build hands to the VNNI
    // panels included, so the tests cover the tile code on all of 1..64 (the panels are the
    // avx512 plugins', tested there).
    static constexpr bool kEveryM = true;

    void configure(const TileShapes &s) {
        shapes_ = s;
        std::memset(reg_, 0, sizeof reg_);
    }
    void release() {}

    template <int T>
    void zero() {
        std::memset(reg_[T], 0, sizeof reg_[T]);
    }
    template <int T>
    void load(const void *base, size_t stride) {
        std::memset(reg_[T], 0, sizeof reg_[T]);
        for (int i = 0; i < shapes_.rows[T]; ++i)
            std::memcpy(reg_[T][i], static_cast<const uint8_t *>(base) + size_t(i) * stride, shapes_.colsb[T]);
    }
    template <int T>
    void store(void *base, size_t stride) {
        for (int i = 0; i < shapes_.rows[T]; ++i)
            std::memcpy(static_cast<uint8_t *>(base) + size_t(i) * stride, reg_[T][i], shapes_.colsb[T]);
    }
    template <int C, int A, int B>
    void dp_su() {
        dp<C, A, B>(false);
    }
    template <int C, int A, int B>
    void dp_ss() {
        dp<C, A, B>(true);
    }

private:
    // Row i of C: vpdpbusd of each B row k (the unsigned operand; a signed B is B + 128 with
    // 128 * (A's group sum) taken off) against A's group k broadcast.
    template <int C, int A, int B>
    void dp(bool b_signed) {
        const __mmask16 cols = __mmask16((1u << (shapes_.colsb[C] / 4)) - 1u);
        const int groups = shapes_.colsb[A] / 4;
        const __m512i flip = _mm512_set1_epi8(char(0x80));
        for (int i = 0; i < shapes_.rows[C]; ++i) {
            __m512i c = _mm512_loadu_si512(reg_[C][i]);
            for (int k = 0; k < groups; ++k) {
                int32_t a;
                std::memcpy(&a, &reg_[A][i][4 * k], 4);
                const __m512i av = _mm512_set1_epi32(a);
                __m512i b = _mm512_loadu_si512(reg_[B][k]);
                if (b_signed) b = _mm512_xor_si512(b, flip);  // b + 128 as unsigned
                __m512i d = _mm512_dpbusd_epi32(_mm512_setzero_si512(), b, av);
                if (b_signed) d = _mm512_sub_epi32(d, _mm512_dpbusd_epi32(_mm512_setzero_si512(), flip, av));
                c = _mm512_mask_add_epi32(c, cols, c, d);
            }
            _mm512_storeu_si512(reg_[C][i], c);
        }
    }

    TileShapes shapes_{};
    alignas(64) uint8_t reg_[kTileRegs][kTileRows][kTileRowBytes];
};

}  // namespace memra::simd::MEMRA_SIMD_NS
