// The AVX2 build of the SIMD kernel family (plugins/simd): -mavx2 -mfma -mf16c.
#pragma once

#include "memra/backend.h"

#define MEMRA_SIMD_NS avx2
#define MEMRA_SIMD_NAME "avx2"
#define MEMRA_SIMD_DESCRIPTION "AVX2 + FMA + F16C kernels (vpmaddubsw/vpmaddwd), bit-identical to scalar"
#define MEMRA_SIMD_FEATURES MEMRA_BACKEND_REQUIRED_FEATURES  // plugins/backends.table, via CMake
#define MEMRA_SIMD_TABLE_FN memra_simd_avx2_backend

#include "simd/isa_avx2.h"
