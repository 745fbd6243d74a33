// Tests only: the VNNI layer's logic built for AVX2, with vpdpbusd emulated exactly
// (simd/isa_vnni_emulated.h), so the AVX-VNNI code path is tested on any AVX2 CPU.
#pragma once

#include "memra/backend.h"

#define MEMRA_SIMD_NS avxvnni_emulated
#define MEMRA_SIMD_NAME "avxvnni_emulated"
#define MEMRA_SIMD_DESCRIPTION "tests only: the AVX-VNNI kernels with vpdpbusd emulated on AVX2"
#define MEMRA_SIMD_FEATURES MEMRA_BACKEND_REQUIRED_FEATURES  // plugins/backends.table, via CMake
#define MEMRA_SIMD_TABLE_FN memra_simd_avxvnni_emulated_backend

#include "simd/isa_vnni_emulated.h"
