#include "dispatch/cpu_features.h"

#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

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

// The AMX tile data (8 KiB per thread) is an XSAVE feature Linux enables in XCR0 but hands to a
// process only on request (5.16+: arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)); a tile
// instruction without it faults (SIGILL). Asked once, here, before any plugin is chosen; the
// grant is process-wide and permanent, so every thread, the callers' included, may use tiles.
bool tile_state_granted() {
#if defined(__linux__) && defined(SYS_arch_prctl)
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
    return false;
#endif
}

enum class Reg { EAX, EBX, ECX, EDX };

// One row of memra/cpu_feature_list.h: where CPUID reports the feature, and the XCR0 state it needs.
struct FeatureRow {
    int bit;
    const char *name;
    uint32_t leaf, subleaf;
    Reg reg;
    int cpuid_bit;
    uint64_t state;
};

#define MEMRA_FEATURE_ROW_(ID, name, bit, leaf, subleaf, reg, cpuid_bit, state) \
    {bit, #name, leaf, subleaf, Reg::reg, cpuid_bit, MEMRA_CPU_STATE_##state},
constexpr FeatureRow kFeatures[] = {MEMRA_CPU_FEATURE_LIST(MEMRA_FEATURE_ROW_)};
#undef MEMRA_FEATURE_ROW_

// The rows are indexed by bit number below: the list must number them 0, 1, 2, ... in order.
constexpr bool rows_in_bit_order() {
    for (int i = 0; i < MEMRA_CPU_FEATURE_COUNT; ++i)
        if (kFeatures[i].bit != i) return false;
    return true;
}
static_assert(rows_in_bit_order(), "memra/cpu_feature_list.h: bits must be 0, 1, 2, ... in row order");
static_assert(MEMRA_CPU_FEATURE_COUNT <= 64, "required_features is a 64-bit mask");

uint32_t reg_of(const Regs &r, Reg which) {
    switch (which) {
    case Reg::EAX: return r.eax;
    case Reg::EBX: return r.ebx;
    case Reg::ECX: return r.ecx;
    default: return r.edx;
    }
}

// CPUID(leaf, subleaf), or zeros when the CPU lacks the subleaf (leaf 7 reports its highest
// subleaf in EAX; cpuid() already returns zeros for a leaf beyond the highest one).
Regs cpuid_if_present(uint32_t leaf, uint32_t subleaf) {
    if (subleaf > 0 && cpuid(leaf, 0).eax < subleaf) return Regs{};
    return cpuid(leaf, subleaf);
}

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

    const bool osxsave = bit(cpuid_if_present(1, 0).ecx, 27);
    const uint64_t xcr = osxsave ? xcr0() : 0;
    f.os_ymm = (xcr & MEMRA_CPU_STATE_YMM) == MEMRA_CPU_STATE_YMM;
    f.os_zmm = (xcr & MEMRA_CPU_STATE_ZMM) == MEMRA_CPU_STATE_ZMM;
    for (const FeatureRow &row : kFeatures)
        if (bit(reg_of(cpuid_if_present(row.leaf, row.subleaf), row.reg), row.cpuid_bit))
            f.cpu_bits |= MEMRA_CPU_BIT(row.bit);
    // The tile state: saved by the OS (XCR0) and granted to this process; asked only on a CPU
    // with AMX, so elsewhere no syscall is made.
    f.os_tile = (xcr & MEMRA_CPU_STATE_TILE) == MEMRA_CPU_STATE_TILE &&
                (f.cpu_bits & MEMRA_CPU_BIT(MEMRA_CPU_AMX_TILE)) && tile_state_granted();
    for (const FeatureRow &row : kFeatures) {
        if (!(f.cpu_bits & MEMRA_CPU_BIT(row.bit))) continue;
        // A feature whose registers the OS does not save is as good as absent: using it would
        // corrupt state on a context switch or fault outright.
        if ((xcr & row.state) != row.state) continue;
        if (row.state == MEMRA_CPU_STATE_TILE && !f.os_tile) continue;
        f.usable |= MEMRA_CPU_BIT(row.bit);
    }
    return f;
}

}  // namespace

const CpuFeatures &detect_cpu_features() {
    static const CpuFeatures features = read_cpu();
    return features;
}

const char *cpu_feature_name(memra_cpu_feature f) {
    return (f >= 0 && f < MEMRA_CPU_FEATURE_COUNT) ? kFeatures[f].name : "?";
}

int cpu_feature_from_name(const std::string &name) {
    for (int i = 0; i < MEMRA_CPU_FEATURE_COUNT; ++i)
        if (name == kFeatures[i].name) return i;
    return -1;
}

std::string cpu_absence_note(uint64_t missing) {
    const CpuFeatures &cpu = detect_cpu_features();
    const uint64_t not_enabled = missing & cpu.cpu_bits & ~cpu.usable;
    if (!not_enabled) return {};
    uint64_t tile = 0;
    for (const FeatureRow &row : kFeatures)
        if (row.state == MEMRA_CPU_STATE_TILE) tile |= MEMRA_CPU_BIT(row.bit);
    if (not_enabled & tile)
        return " (the CPU has " + cpu_feature_list(not_enabled) +
               ", but the OS did not grant this process the AMX tile state: arch_prctl(ARCH_REQ_XCOMP_PERM) "
               "refused, or XCR0 lacks it)";
    return " (the CPU has " + cpu_feature_list(not_enabled) + ", but the OS does not save their registers)";
}

std::string cpu_feature_list(uint64_t mask) {
    std::string out;
    for (int i = 0; i < MEMRA_CPU_FEATURE_COUNT; ++i) {
        if (!(mask & MEMRA_CPU_BIT(i))) continue;
        if (!out.empty()) out += ' ';
        out += kFeatures[i].name;
    }
    return out;
}

}  // namespace memra
