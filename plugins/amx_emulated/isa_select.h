// Tests only: the amx build's tile driver (simd/tile_gemm.h) with the tile unit emulated in
// AVX-512 code of the same semantics (simd/tiles_emulated.h), so the AMX code path is tested on
// any CPU with the avx512 plugin's features.
#pragma once

#include "memra/backend.h"

#define MEMRA_SIMD_NS amx_emulated
#define MEMRA_SIMD_NAME "amx_emulated"
#define MEMRA_SIMD_DESCRIPTION "tests only: the AMX rows-path kernels with the tiles emulated in AVX-512"
#define MEMRA_SIMD_FEATURES MEMRA_BACKEND_REQUIRED_FEATURES  // plugins/backends.table, via CMake
#define MEMRA_SIMD_TABLE_FN memra_simd_amx_emulated_backend
#define MEMRA_SIMD_DPBUSD _mm256_dpbusd_epi32
#define MEMRA_SIMD_DPWSSD _mm256_dpwssd_epi32
#define MEMRA_SIMD_WIDE512 1  // the 16-row VNNI panels on zmm, whose decoders build the B tiles

#include "simd/isa_vnni.h"
#include "simd/tiles_emulated.h"
