// The AVX-VNNI build of the SIMD kernel family (plugins/simd): AVX2 + VEX vpdpbusd.
#pragma once

#include "memra/backend.h"

#define MEMRA_SIMD_NS avxvnni
#define MEMRA_SIMD_NAME "avxvnni"
#define MEMRA_SIMD_DESCRIPTION "AVX2 + AVX-VNNI kernels (VEX vpdpbusd), bit-identical to scalar"
#define MEMRA_SIMD_FEATURES MEMRA_BACKEND_REQUIRED_FEATURES  // plugins/backends.table, via CMake
#define MEMRA_SIMD_TABLE_FN memra_simd_avxvnni_backend
#define MEMRA_SIMD_DPBUSD _mm256_dpbusd_avx_epi32
#define MEMRA_SIMD_DPWSSD _mm256_dpwssd_avx_epi32

#include "simd/isa_vnni.h"
