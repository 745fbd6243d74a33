// The tile shapes of the rows path on tile units (simd/tile_gemm.h), shared by both Tiles layers
// (simd/tiles_amx.h: AMX instructions; simd/tiles_emulated.h: the same semantics in AVX-512 code
// for the tests), so the driver and either layer agree on what each tile register holds.
#pragma once

#include <cstdint>

namespace memra::simd::MEMRA_SIMD_NS {

// AMX palette 1: 8 tile registers of at most 16 rows x 64 bytes.
constexpr int kTileRegs = 8;
constexpr int kTileRows = 16;
constexpr int kTileRowBytes = 64;

// rows[t] x colsb[t] bytes of tile register t (0 rows: unused).
struct TileShapes {
    uint8_t rows[kTileRegs];
    uint16_t colsb[kTileRegs];
};

}  // namespace memra::simd::MEMRA_SIMD_NS
