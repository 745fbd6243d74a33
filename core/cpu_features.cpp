#include "cpu_features.h"

#include <cpuid.h>

#include <cstring>

namespace memra {
namespace {

struct Regs {
    uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

Regs cpuid(uint32_t leaf, uint32_t subleaf) {
    Regs r;
    if (!__get_cpuid_count(leaf, subleaf, &r.eax, &r.ebx, &r.ecx, &r.edx)) r = Regs{};
    return r;
}

// XGETBV is only legal once CPUID.1:ECX.OSXSAVE says the OS enabled it. Inline assembly rather
// than _xgetbv() so this file needs no -mxsave.
uint64_t xcr0() {
    uint32_t eax = 0, edx = 0;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return (static_cast<uint64_t>(edx) << 32) | eax;
}

bool bit(uint32_t reg, int n) { return (reg >> n) & 1u; }

const char *const kFeatureNames[MEMRA_CPU_FEATURE_COUNT] = {
    "sse2", "ssse3", "sse4_1", "sse4_2", "popcnt", "avx", "avx2", "fma", "f16c", "bmi1", "bmi2",
    "avx_vnni", "avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512_vnni", "avx512_bf16",
};

CpuFeatures read_cpu() {
    CpuFeatures f;
    Regs leaf0 = cpuid(0, 0);
    char vendor[13] = {};
    std::memcpy(vendor + 0, &leaf0.ebx, 4);
    std::memcpy(vendor + 4, &leaf0.edx, 4);
    std::memcpy(vendor + 8, &leaf0.ecx, 4);
    f.vendor = vendor;

    if (cpuid(0x80000000u, 0).eax >= 0x80000004u) {
        char brand[49] = {};
        for (uint32_t i = 0; i < 3; ++i) {
            Regs r = cpuid(0x80000002u + i, 0);
            std::memcpy(brand + 16 * i + 0, &r.eax, 4);
            std::memcpy(brand + 16 * i + 4, &r.ebx, 4);
            std::memcpy(brand + 16 * i + 8, &r.ecx, 4);
            std::memcpy(brand + 16 * i + 12, &r.edx, 4);
        }
        f.model = brand;
        size_t start = f.model.find_first_not_of(' ');
        f.model = start == std::string::npos ? std::string() : f.model.substr(start);
    }

    const uint32_t max_leaf = leaf0.eax;
    Regs l1 = max_leaf >= 1 ? cpuid(1, 0) : Regs{};
    Regs l7 = max_leaf >= 7 ? cpuid(7, 0) : Regs{};
    Regs l7s1 = (max_leaf >= 7 && l7.eax >= 1) ? cpuid(7, 1) : Regs{};

    auto set = [&f](memra_cpu_feature feature, bool present) {
        if (present) f.cpu_bits |= MEMRA_CPU_BIT(feature);
    };
    set(MEMRA_CPU_SSE2, bit(l1.edx, 26));
    set(MEMRA_CPU_SSSE3, bit(l1.ecx, 9));
    set(MEMRA_CPU_FMA, bit(l1.ecx, 12));
    set(MEMRA_CPU_SSE4_1, bit(l1.ecx, 19));
    set(MEMRA_CPU_SSE4_2, bit(l1.ecx, 20));
    set(MEMRA_CPU_POPCNT, bit(l1.ecx, 23));
    set(MEMRA_CPU_AVX, bit(l1.ecx, 28));
    set(MEMRA_CPU_F16C, bit(l1.ecx, 29));
    set(MEMRA_CPU_BMI1, bit(l7.ebx, 3));
    set(MEMRA_CPU_AVX2, bit(l7.ebx, 5));
    set(MEMRA_CPU_BMI2, bit(l7.ebx, 8));
    set(MEMRA_CPU_AVX512F, bit(l7.ebx, 16));
    set(MEMRA_CPU_AVX512DQ, bit(l7.ebx, 17));
    set(MEMRA_CPU_AVX512BW, bit(l7.ebx, 30));
    set(MEMRA_CPU_AVX512VL, bit(l7.ebx, 31));
    set(MEMRA_CPU_AVX512_VNNI, bit(l7.ecx, 11));
    set(MEMRA_CPU_AVX_VNNI, bit(l7s1.eax, 4));
    set(MEMRA_CPU_AVX512_BF16, bit(l7s1.eax, 5));

    if (bit(l1.ecx, 27)) {  // OSXSAVE
        const uint64_t xcr = xcr0();
        f.os_ymm = (xcr & 0x6) == 0x6;    // XMM | YMM
        f.os_zmm = (xcr & 0xE6) == 0xE6;  // XMM | YMM | opmask | ZMM_Hi256 | Hi16_ZMM
    }

    // A feature whose registers the OS does not save is as good as absent: using it would
    // corrupt state on a context switch or fault outright.
    const uint64_t needs_ymm = MEMRA_CPU_BIT(MEMRA_CPU_AVX) | MEMRA_CPU_BIT(MEMRA_CPU_AVX2) |
                               MEMRA_CPU_BIT(MEMRA_CPU_FMA) | MEMRA_CPU_BIT(MEMRA_CPU_F16C) |
                               MEMRA_CPU_BIT(MEMRA_CPU_AVX_VNNI);
    const uint64_t needs_zmm = MEMRA_CPU_BIT(MEMRA_CPU_AVX512F) | MEMRA_CPU_BIT(MEMRA_CPU_AVX512BW) |
                               MEMRA_CPU_BIT(MEMRA_CPU_AVX512DQ) | MEMRA_CPU_BIT(MEMRA_CPU_AVX512VL) |
                               MEMRA_CPU_BIT(MEMRA_CPU_AVX512_VNNI) |
                               MEMRA_CPU_BIT(MEMRA_CPU_AVX512_BF16);
    f.usable = f.cpu_bits;
    if (!f.os_ymm) f.usable &= ~(needs_ymm | needs_zmm);
    if (!f.os_zmm) f.usable &= ~needs_zmm;
    return f;
}

}  // namespace

const CpuFeatures &detect_cpu_features() {
    static const CpuFeatures features = read_cpu();
    return features;
}

const char *cpu_feature_name(memra_cpu_feature f) {
    return (f >= 0 && f < MEMRA_CPU_FEATURE_COUNT) ? kFeatureNames[f] : "?";
}

int cpu_feature_from_name(const std::string &name) {
    for (int i = 0; i < MEMRA_CPU_FEATURE_COUNT; ++i)
        if (name == kFeatureNames[i]) return i;
    return -1;
}

std::string cpu_feature_list(uint64_t mask) {
    std::string out;
    for (int i = 0; i < MEMRA_CPU_FEATURE_COUNT; ++i) {
        if (!(mask & MEMRA_CPU_BIT(i))) continue;
        if (!out.empty()) out += ' ';
        out += kFeatureNames[i];
    }
    return out;
}

}  // namespace memra
