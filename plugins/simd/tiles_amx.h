// The tile layer on AMX (AMX-TILE + AMX-INT8), for simd/tile_gemm.h. Tile registers are
// immediates, so every operation is a template on its register numbers; the inline assembly is
// our own because GCC's _tile_* macros stringify their arguments (no template parameters) and
// its tileloadd has no memory operand, so a buffer written just before could still sit in
// registers: every load here is a compiler barrier ("memory").
//
// The OS must have granted this process the tile state (Linux: arch_prctl(ARCH_REQ_XCOMP_PERM,
// XFEATURE_XTILEDATA)) before the first configure(): the core asks for it while detecting the
// CPU and treats a refusal as amx_tile absent, so this plugin is never chosen without it.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "simd/tiles_shape.h"

namespace memra::simd::MEMRA_SIMD_NS {

class Tiles {
public:
    // The real tile unit: a call with fewer activations than its format's least m
    // (simd/tile_formats.h) goes to the VNNI panels, which are faster there.
    static constexpr bool kEveryM = false;

    // ldtilecfg with palette 1 and these shapes (the tiles start zeroed); release() gives the
    // state back (tilerelease), so a thread that leaves the kernel carries no tile state into
    // context switches.
    void configure(const TileShapes &s) {
        alignas(64) uint8_t cfg[64] = {};
        cfg[0] = 1;  // palette 1
        for (int t = 0; t < kTileRegs; ++t) {
            std::memcpy(&cfg[16 + 2 * t], &s.colsb[t], 2);
            cfg[48 + t] = s.rows[t];
        }
        _tile_loadconfig(cfg);
    }
    void release() { _tile_release(); }

    template <int T>
    void zero() {
        asm volatile("tilezero %%tmm%c0" ::"i"(T));
    }
    template <int T>
    void load(const void *base, size_t stride) {
        asm volatile("tileloadd (%0,%1,1), %%tmm%c2" ::"r"(base), "r"(stride), "i"(T) : "memory");
    }
    template <int T>
    void store(void *base, size_t stride) {
        asm volatile("tilestored %%tmm%c2, (%0,%1,1)" ::"r"(base), "r"(stride), "i"(T) : "memory");
    }
    // C += A . B by 4-byte groups: A signed bytes, B unsigned (tdpbsud) or signed (tdpbssd).
    template <int C, int A, int B>
    void dp_su() {
        asm volatile("tdpbsud %%tmm%c2, %%tmm%c1, %%tmm%c0" ::"i"(C), "i"(A), "i"(B));
    }
    template <int C, int A, int B>
    void dp_ss() {
        asm volatile("tdpbssd %%tmm%c2, %%tmm%c1, %%tmm%c0" ::"i"(C), "i"(A), "i"(B));
    }
};

}  // namespace memra::simd::MEMRA_SIMD_NS
