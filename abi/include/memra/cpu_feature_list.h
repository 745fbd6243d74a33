/* The CPU features a backend plugin may require: one row each, and the only place a feature is
 * named. From this list come the memra_cpu_feature enum (below), the core's CPUID/XGETBV
 * detection and its name <-> bit mapping (core/dispatch/cpu_features.cpp), and the feature names the
 * CMake build knows (plugins/backends.cmake: manifests, plugin masks, tests' feature lists).
 *
 *   X(ID, name, bit, leaf, subleaf, reg, cpuid_bit, state)
 *   ID         MEMRA_CPU_<ID>
 *   name       the Linux /proc/cpuinfo spelling: manifests, MEMRA_CPU_EXPERT_DISABLE_FEATURES and
 *              the tools use it, so a packager can compare with lscpu
 *   bit        its bit in memra_backend_v1::required_features. Part of the plugin interface:
 *              never renumber a row; a new feature takes the next free number (the core
 *              static_asserts that the numbers are 0, 1, 2, ... in row order)
 *   leaf, subleaf, reg, cpuid_bit   where CPUID reports it (reg: EAX, EBX, ECX or EDX)
 *   state      the register state the OS must save (XCR0, read with XGETBV) for the feature to
 *              count as present: NONE, YMM (AVX*), ZMM (AVX-512*) or TILE (AMX*); one whose
 *              registers the OS does not save is as good as absent. TILE also needs the OS's
 *              permission for this process (Linux: arch_prctl(ARCH_REQ_XCOMP_PERM,
 *              XFEATURE_XTILEDATA), asked by the core's detection): refused, AMX is absent. */
#ifndef MEMRA_CPU_FEATURE_LIST_H
#define MEMRA_CPU_FEATURE_LIST_H

#include <stdint.h>

#define MEMRA_CPU_STATE_NONE 0x0u
#define MEMRA_CPU_STATE_YMM 0x6u  /* XCR0: XMM | YMM */
#define MEMRA_CPU_STATE_ZMM 0xE6u /* XCR0: XMM | YMM | opmask | ZMM_Hi256 | Hi16_ZMM */
#define MEMRA_CPU_STATE_TILE 0x60000u /* XCR0: XTILECFG (17) | XTILEDATA (18) */

/* clang-format off */
#define MEMRA_CPU_FEATURE_LIST(X)                                                    \
    X(SSE2,        sse2,         0, 0x1, 0, EDX, 26, NONE) /* the x86-64 baseline */ \
    X(SSSE3,       ssse3,        1, 0x1, 0, ECX,  9, NONE)                           \
    X(SSE4_1,      sse4_1,       2, 0x1, 0, ECX, 19, NONE)                           \
    X(SSE4_2,      sse4_2,       3, 0x1, 0, ECX, 20, NONE)                           \
    X(POPCNT,      popcnt,       4, 0x1, 0, ECX, 23, NONE)                           \
    X(AVX,         avx,          5, 0x1, 0, ECX, 28, YMM)                            \
    X(AVX2,        avx2,         6, 0x7, 0, EBX,  5, YMM)                            \
    X(FMA,         fma,          7, 0x1, 0, ECX, 12, YMM)                            \
    X(F16C,        f16c,         8, 0x1, 0, ECX, 29, YMM)                            \
    X(BMI1,        bmi1,         9, 0x7, 0, EBX,  3, NONE)                           \
    X(BMI2,        bmi2,        10, 0x7, 0, EBX,  8, NONE)                           \
    X(AVX_VNNI,    avx_vnni,    11, 0x7, 1, EAX,  4, YMM) /* VEX vpdpbusd */         \
    X(AVX512F,     avx512f,     12, 0x7, 0, EBX, 16, ZMM)                            \
    X(AVX512BW,    avx512bw,    13, 0x7, 0, EBX, 30, ZMM)                            \
    X(AVX512DQ,    avx512dq,    14, 0x7, 0, EBX, 17, ZMM)                            \
    X(AVX512VL,    avx512vl,    15, 0x7, 0, EBX, 31, ZMM)                            \
    X(AVX512_VNNI, avx512_vnni, 16, 0x7, 0, ECX, 11, ZMM)                            \
    X(AVX512_BF16, avx512_bf16, 17, 0x7, 1, EAX,  5, ZMM)                            \
    X(AMX_TILE,    amx_tile,    18, 0x7, 0, EDX, 24, TILE)                           \
    X(AMX_INT8,    amx_int8,    19, 0x7, 0, EDX, 25, TILE)                           \
    X(AMX_BF16,    amx_bf16,    20, 0x7, 0, EDX, 22, TILE)
/* clang-format on */

/* CPU features as bit numbers in memra_backend_v1::required_features. */
#define MEMRA_CPU_ENUM_ROW_(ID, name, bit, leaf, subleaf, reg, cpuid_bit, state) MEMRA_CPU_##ID = bit,
#define MEMRA_CPU_ONE_(ID, name, bit, leaf, subleaf, reg, cpuid_bit, state) +1
typedef enum memra_cpu_feature {
    MEMRA_CPU_FEATURE_LIST(MEMRA_CPU_ENUM_ROW_)
    MEMRA_CPU_FEATURE_COUNT = 0 MEMRA_CPU_FEATURE_LIST(MEMRA_CPU_ONE_)
} memra_cpu_feature;

#define MEMRA_CPU_BIT(feature) (UINT64_C(1) << (feature))

#endif
