// The AMX build: the rows path (gemm) of the integer-dot formats on AMX tiles (simd/tile_gemm.h
// over simd/tiles_amx.h), the decode and float side of the SIMD family's AVX-512 (VNNI) layer.
// Only gemm: everything else, the token path included, is left to the plugins below.
#pragma once

#include "memra/backend.h"

#define MEMRA_SIMD_NS amx
#define MEMRA_SIMD_NAME "amx"
#define MEMRA_SIMD_DESCRIPTION "AMX-INT8 tiles for the rows path of the integer formats, bit-identical to scalar"
#define MEMRA_SIMD_FEATURES MEMRA_BACKEND_REQUIRED_FEATURES  // plugins/backends.table, via CMake
#define MEMRA_SIMD_TABLE_FN memra_simd_amx_backend
#define MEMRA_SIMD_DPBUSD _mm256_dpbusd_epi32
#define MEMRA_SIMD_DPWSSD _mm256_dpwssd_epi32
#define MEMRA_SIMD_WIDE512 1  // the 16-row VNNI panels on zmm, whose decoders build the B tiles

#include "simd/isa_vnni.h"
#include "simd/tiles_amx.h"
