// The CPU-feature list (memra/cpu_feature_list.h) against the kernel's own reading of the CPU:
// a wrong leaf, register or bit in a row shows up as a feature the core and /proc/cpuinfo
// disagree on. Linux reports a feature in "flags" only when the OS saves its register state too,
// which is exactly the core's "usable".
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "backend_inventory.h"
#include "dispatch/cpu_features.h"

namespace memra {
namespace {

TEST(CpuFeatureList, NamesRoundTrip) {
    for (int f = 0; f < MEMRA_CPU_FEATURE_COUNT; ++f) {
        const char *name = cpu_feature_name(static_cast<memra_cpu_feature>(f));
        EXPECT_EQ(cpu_feature_from_name(name), f) << name;
    }
    EXPECT_EQ(cpu_feature_from_name("sse9"), -1);
    EXPECT_EQ(cpu_feature_list(MEMRA_CPU_BIT(MEMRA_CPU_AVX2) | MEMRA_CPU_BIT(MEMRA_CPU_SSE2)), "sse2 avx2");
}

TEST(CpuFeatureList, DetectionAgreesWithProcCpuinfo) {
    const std::set<std::string> flags = tests::cpu_flags();
    ASSERT_FALSE(flags.empty()) << "no flags line in /proc/cpuinfo";
    const CpuFeatures &cpu = detect_cpu_features();
    for (int f = 0; f < MEMRA_CPU_FEATURE_COUNT; ++f) {
        const char *name = cpu_feature_name(static_cast<memra_cpu_feature>(f));
        EXPECT_EQ(cpu.has(static_cast<memra_cpu_feature>(f)), flags.count(name) == 1)
            << name << ": the core says " << (cpu.has(static_cast<memra_cpu_feature>(f)) ? "usable" : "absent")
            << ", /proc/cpuinfo " << (flags.count(name) ? "lists it" : "does not");
    }
}

}  // namespace
}  // namespace memra
