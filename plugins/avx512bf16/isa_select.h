// The AVX-512 build of the SIMD kernel family with AVX512_BF16: everything the avx512 build has
// (the VNNI layer with EVEX vpdpbusd, the wide layer), and BF16 dots by vdpbf16ps
// (simd/formats_bf16.h), which computes the project's BF16 order itself.
#pragma once

#include "memra/backend.h"

#define MEMRA_SIMD_NS avx512bf16
#define MEMRA_SIMD_NAME "avx512bf16"
#define MEMRA_SIMD_DESCRIPTION "AVX-512 (F/BW/DQ/VL/VNNI/BF16) kernels (EVEX vpdpbusd, vdpbf16ps), bit-identical to scalar"
#define MEMRA_SIMD_FEATURES MEMRA_BACKEND_REQUIRED_FEATURES  // plugins/backends.table, via CMake
#define MEMRA_SIMD_TABLE_FN memra_simd_avx512bf16_backend
#define MEMRA_SIMD_DPBUSD _mm256_dpbusd_epi32
#define MEMRA_SIMD_DPWSSD _mm256_dpwssd_epi32
#define MEMRA_SIMD_WIDE512 1  // the wide layer: simd/wide512_*.h (pairs in 512-bit registers)

#include "simd/isa_vnni.h"
