// The AVX-512 build of the SIMD kernel family (plugins/simd): the VNNI layer with the EVEX
// vpdpbusd / vpdpwssd of AVX512-VNNI + AVX512VL on 256-bit registers, and on the rows path the
// super-block integer work on chunk pairs in 512-bit registers, folded back into the same 8 int
// lanes (float accumulators stay __m256, the canonical 8-lane order).
#pragma once

#include "memra/backend.h"

#define MEMRA_SIMD_NS avx512
#define MEMRA_SIMD_NAME "avx512"
#define MEMRA_SIMD_DESCRIPTION "AVX-512 (F/BW/DQ/VL/VNNI) kernels (EVEX vpdpbusd), bit-identical to scalar"
#define MEMRA_SIMD_FEATURES MEMRA_BACKEND_REQUIRED_FEATURES  // plugins/backends.table, via CMake
#define MEMRA_SIMD_TABLE_FN memra_simd_avx512_backend
#define MEMRA_SIMD_DPBUSD _mm256_dpbusd_epi32
#define MEMRA_SIMD_DPWSSD _mm256_dpwssd_epi32
#define MEMRA_SIMD_WIDE512 1  // the wide layer: simd/wide512_*.h (pairs in 512-bit registers)

#include "simd/isa_vnni.h"
