// Plugin interface 2: the registry picks per qtype AND per path (KernelTable), and a plugin
// built for another interface is skipped with the reason (plugin_loader).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "dispatch/backend_registry.h"
#include "memra/cpu_experts.h"
#include "memra/qtypes.h"
#include "dispatch/plugin_loader.h"
#include "dispatch/tuning.h"

namespace memra {
namespace {

void gemv_b(const uint8_t *, size_t, int32_t, int32_t, const void *, float *) {}
void gemm_a(const uint8_t *, size_t, int32_t, int32_t, const void *, size_t, int32_t, float *, size_t) {}
void gemm_b(const uint8_t *, size_t, int32_t, int32_t, const void *, size_t, int32_t, float *, size_t) {}
void dequantize(const uint8_t *, int32_t, float *) {}
void repack(const uint8_t *, size_t, int32_t, int32_t, uint8_t *) {}
void quantize_a(const float *, int32_t, void *) {}
void quantize_b(const float *, int32_t, void *) {}

memra_backend_v2 table(const char *name, const memra_kernel_v2 *kernels, int32_t count) {
    memra_backend_v2 t{};
    t.interface_version = MEMRA_BACKEND_INTERFACE_VERSION;
    t.struct_size = sizeof t;
    t.name = name;
    t.kernel_count = count;
    t.kernels = kernels;
    return t;
}

constexpr uint32_t kTiles = 0x414d5801u;  // a plugin's own layout id

// An AMX-like plugin above: Q8_0's rows path in ggml's layout and Q4_0's rows path only in a
// layout of its own; nothing for the token path. Below it a plugin serving everything.
TEST(KernelTable, EachPathComesFromTheBestPluginServingIt) {
    const memra_kernel_v2 upper_kernels[] = {
        {MEMRA_QTYPE_Q8_0, MEMRA_ACT_Q8_0, MEMRA_LAYOUT_GGML, 1, nullptr, gemm_a, dequantize, nullptr},
        {MEMRA_QTYPE_Q4_0, MEMRA_ACT_Q8_0, kTiles, 16, nullptr, gemm_a, nullptr, repack},
    };
    const memra_kernel_v2 lower_kernels[] = {
        {MEMRA_QTYPE_Q8_0, MEMRA_ACT_Q8_0, MEMRA_LAYOUT_GGML, 1, gemv_b, gemm_b, dequantize, nullptr},
        {MEMRA_QTYPE_Q4_0, MEMRA_ACT_Q8_0, MEMRA_LAYOUT_GGML, 1, gemv_b, gemm_b, dequantize, nullptr},
    };
    memra_backend_v2 upper = table("upper", upper_kernels, 2), lower = table("lower", lower_kernels, 2);
    upper.quantize[MEMRA_ACT_Q8_0] = quantize_a;
    lower.quantize[MEMRA_ACT_Q8_0] = quantize_b;
    lower.quantize[MEMRA_ACT_F32] = quantize_b;
    KernelTable k;
    k.add(&upper);  // best first
    k.add(&lower);

    // Q8_0: the token path falls to the lower plugin, the rows path is the upper one's.
    EXPECT_EQ(k.kernel_for(MEMRA_QTYPE_Q8_0, KernelPath::kGemv).backend, &lower);
    EXPECT_EQ(k.kernel_for(MEMRA_QTYPE_Q8_0, KernelPath::kGemv).kernel->gemv, gemv_b);
    EXPECT_EQ(k.kernel_for(MEMRA_QTYPE_Q8_0, KernelPath::kGemm).backend, &upper);
    EXPECT_EQ(k.kernel_for(MEMRA_QTYPE_Q8_0, KernelPath::kGemm).kernel->gemm, gemm_a);
    // Q4_0: the upper plugin's rows kernel wants repacked weights; on weights in ggml's layout
    // the rows path falls to the lower plugin, and any-layout asks see the upper one.
    EXPECT_EQ(k.kernel_for(MEMRA_QTYPE_Q4_0, KernelPath::kGemm).backend, &lower);
    EXPECT_EQ(k.kernel_for(MEMRA_QTYPE_Q4_0, KernelPath::kGemm, true).backend, &upper);
    EXPECT_EQ(k.kernel_for(MEMRA_QTYPE_Q4_0, KernelPath::kGemm, true).kernel->layout, kTiles);
    EXPECT_EQ(k.kernel_for(MEMRA_QTYPE_Q4_0, KernelPath::kGemv, true).backend, &lower);
    // Nobody serves F32; quantizers come from the best plugin that has one.
    EXPECT_EQ(k.kernel_for(MEMRA_QTYPE_F32, KernelPath::kGemv).kernel, nullptr);
    EXPECT_EQ(k.kernel_for(-1, KernelPath::kGemv).kernel, nullptr);
    EXPECT_EQ(k.quantizer_for(MEMRA_ACT_Q8_0), quantize_a);
    EXPECT_EQ(k.quantizer_for(MEMRA_ACT_F32), quantize_b);
    EXPECT_EQ(k.quantizer_for(MEMRA_ACT_BF16), nullptr);
}

struct TempDir {
    std::filesystem::path path;
    TempDir() {
        char templ[] = "/tmp/memra-interface-XXXXXX";
        path = mkdtemp(templ);
    }
    ~TempDir() { std::filesystem::remove_all(path); }
};

// The scalar plugin's module under a manifest claiming `interface`: loaded only for the core's.
PluginRecord scalar_with_interface(const TempDir &dir, int interface) {
    std::filesystem::copy_file(std::filesystem::path(MEMRA_TEST_BACKEND_DIR) / "memra-backend-scalar.so",
                               dir.path / "memra-backend-scalar.so");
    std::ofstream(dir.path / "memra-backend-scalar.manifest")
        << "name scalar\ninterface " << interface << "\npriority 0\nrequires sse2\nmodule memra-backend-scalar.so\n";
    std::vector<PluginRecord> found = load_plugins({dir.path.string()}, ~uint64_t{0});
    EXPECT_EQ(found.size(), 1u);
    return found.empty() ? PluginRecord{} : found.front();
}

TEST(PluginInterface, PluginOfAnotherInterfaceIsSkippedWithTheReason) {
    TempDir dir;
    const PluginRecord rec = scalar_with_interface(dir, 1);
    EXPECT_FALSE(rec.loaded);
    EXPECT_EQ(rec.status, "interface 1 (core speaks " + std::to_string(MEMRA_BACKEND_INTERFACE_VERSION) + ")");
}

TEST(PluginInterface, PluginOfThisInterfaceLoads) {
    TempDir dir;
    const PluginRecord rec = scalar_with_interface(dir, MEMRA_BACKEND_INTERFACE_VERSION);
    EXPECT_TRUE(rec.loaded) << rec.status;
    ASSERT_NE(rec.table, nullptr);
    EXPECT_EQ(rec.table->interface_version, MEMRA_BACKEND_INTERFACE_VERSION);
}

// MEMRA_CPU_EXPERT_TUNING: auto follows the CPUID vendor string, a vendor name overrides it
// (so one machine runs the other vendor's forms), anything else is refused.
TEST(KernelTuning, AutoFollowsTheVendorAndNamesOverrideIt) {
    struct Case {
        const char *setting, *vendor;
        int32_t want;
    };
    const Case cases[] = {
        {"auto", "GenuineIntel", MEMRA_TUNING_INTEL}, {"auto", "AuthenticAMD", MEMRA_TUNING_AMD},
        {"auto", "HygonGenuine", MEMRA_TUNING_GENERIC}, {"amd", "GenuineIntel", MEMRA_TUNING_AMD},
        {"intel", "AuthenticAMD", MEMRA_TUNING_INTEL}, {"generic", "AuthenticAMD", MEMRA_TUNING_GENERIC},
    };
    for (const Case &c : cases) {
        CpuFeatures cpu;
        cpu.vendor = c.vendor;
        int32_t t = -1;
        ASSERT_TRUE(parse_kernel_tuning(c.setting, cpu, t)) << c.setting;
        EXPECT_EQ(t, c.want) << c.setting << " on " << c.vendor;
        EXPECT_STREQ(kernel_tuning_name(t), c.setting == std::string("auto") ? kernel_tuning_name(c.want) : c.setting);
    }
    int32_t t = -1;
    EXPECT_FALSE(parse_kernel_tuning("zen9", CpuFeatures{}, t));
    EXPECT_FALSE(parse_kernel_tuning("AMD", CpuFeatures{}, t)) << "names are lower case, as the other settings'";
    for (const char *ok : {"auto", "intel", "amd", "generic"}) EXPECT_TRUE(is_kernel_tuning_setting(ok)) << ok;
    for (const char *bad : {"", "zen9", "AMD"}) EXPECT_FALSE(is_kernel_tuning_setting(bad)) << bad;
}

}  // namespace
}  // namespace memra
