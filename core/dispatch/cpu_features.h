// What this CPU and OS can run, from CPUID and XGETBV at run time, never from compiler macros:
// the core itself is built for baseline x86-64 and must decide for plugins built wider.
#pragma once

#include <cstdint>
#include <string>

#include "memra/backend.h"

namespace memra {

struct CpuFeatures {
    std::string vendor;     // "GenuineIntel", "AuthenticAMD", ...
    std::string model;      // brand string
    uint64_t cpu_bits = 0;  // MEMRA_CPU_BIT(f) for every feature CPUID reports
    bool os_ymm = false;    // XCR0 says the OS saves SSE + AVX (YMM) state
    bool os_zmm = false;    // XCR0 says the OS saves opmask + ZMM state as well
    bool os_tile = false;   // XCR0 has the AMX tile state AND the OS granted it to this process
    uint64_t usable = 0;    // cpu_bits restricted to what the OS state allows

    bool has(memra_cpu_feature f) const { return (usable & MEMRA_CPU_BIT(f)) != 0; }
};

// Reads CPUID/XGETBV once; the result never changes during the process.
const CpuFeatures &detect_cpu_features();

// Linux /proc/cpuinfo spelling of a feature ("avx512_vnni") and back; -1 when unknown.
const char *cpu_feature_name(memra_cpu_feature f);
int cpu_feature_from_name(const std::string &name);

// "avx2 fma f16c" for a mask, in feature order.
std::string cpu_feature_list(uint64_t mask);

// Why features of `missing` that CPUID reports are absent all the same (the OS does not save
// their state, or refused the AMX tile state): " (...)", or "" when the CPU lacks them.
std::string cpu_absence_note(uint64_t missing);

}  // namespace memra
