// Tests only: the AVX2 build of the SIMD kernel family behind a weight layout of its own
// (simd/interleaved_rows.h: rows interleaved in groups of 4), so that the core's repack path for
// file-backed weights is proven end to end: a kernel fed unrepacked bytes computes garbage.
#pragma once

#include "memra/backend.h"

#define MEMRA_SIMD_NS rows_interleaved
#define MEMRA_SIMD_NAME "rows_interleaved"
#define MEMRA_SIMD_DESCRIPTION "tests only: the AVX2 kernels on weights repacked into rows interleaved in groups of 4"
#define MEMRA_SIMD_FEATURES MEMRA_BACKEND_REQUIRED_FEATURES  // plugins/backends.table, via CMake
#define MEMRA_SIMD_TABLE_FN memra_simd_rows_interleaved_backend

#include "simd/isa_avx2.h"
