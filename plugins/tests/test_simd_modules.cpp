// The SIMD plugin modules as the core loads them, beside what conformance/ checks of their
// results (every plugin against the scalar one, bit for bit: conformance/suite): the entry point
// is baseline code with no static constructors, the table states its manifest's features, and
// the module holds only the instructions of its row of plugins/backends.table.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "isa_scan.h"
#include "memra/cpu_experts.h"
#include "simd_builds.h"
#include "test_util.h"

namespace memra::plugin_tests {
namespace {

const std::string kBackendDir = MEMRA_SIMD_BACKEND_DIR;
const std::vector<const char *> kPlugins = simd_rows(false);

// Each SIMD module is loaded by a core that has only read its manifest: the entry point (run
// right after dlopen) must be baseline x86-64 code, and no translation unit may have a
// dynamic initialiser. The kernels themselves are full of VEX code, by design.
class SimdModule : public ::testing::TestWithParam<const char *> {};

TEST_P(SimdModule, EntryPointHasNoVexAndNoStaticConstructors) {
    const std::string path = kBackendDir + "/memra-backend-" + GetParam() + ".so";
    int status = 0;
    const std::string dis = run_command(
        "objdump -d --no-show-raw-insn --disassemble=memra_backend_entry_v2 '" + path + "' 2>&1", &status);
    ASSERT_EQ(status, 0) << dis;
    ASSERT_NE(dis.find("<memra_backend_entry_v2>:"), std::string::npos) << dis;
    const IsaScan s = scan_disassembly(dis);
    EXPECT_GT(s.instructions, 0) << dis;
    std::string shown;
    for (const std::string &o : s.offending) shown += o + "\n";
    EXPECT_TRUE(s.offending.empty()) << "VEX/EVEX in the entry point:\n" << shown;
    const std::string syms = run_command("nm '" + path + "' 2>&1", &status);
    ASSERT_EQ(status, 0) << syms;
    EXPECT_EQ(syms.find("_GLOBAL__sub_I"), std::string::npos) << "a translation unit has a static constructor";
}

// The core refuses a plugin whose table's required_features differ from its manifest (and then
// silently serves everything from a lower plugin), so check the two agree.
TEST_P(SimdModule, TableFeaturesEqualManifest) {
    const std::string name = GetParam();
#define MEMRA_FEATURE_NAME_(ID, name, ...) #name,
    static const char *const kNames[MEMRA_CPU_FEATURE_COUNT] = {MEMRA_CPU_FEATURE_LIST(MEMRA_FEATURE_NAME_)};
#undef MEMRA_FEATURE_NAME_
    uint64_t want = 0;
    for (const std::string &f : manifest_requires(name)) {
        int bit = -1;
        for (int i = 0; i < MEMRA_CPU_FEATURE_COUNT; ++i)
            if (f == kNames[i]) bit = i;
        ASSERT_GE(bit, 0) << "manifest of " << name << " names unknown feature " << f;
        want |= MEMRA_CPU_BIT(bit);
    }
    const memra_backend_v2 *t = nullptr;
    use_build(name, t);
    if (IsSkipped() || HasFatalFailure()) return;
    EXPECT_EQ(t->required_features, want) << name;
    EXPECT_EQ(std::string(t->name), name);
    EXPECT_EQ(t->interface_version, MEMRA_BACKEND_INTERFACE_VERSION);
    EXPECT_EQ(t->struct_size, sizeof(memra_backend_v2));
    for (int f = 0; f < MEMRA_ACT_FORMAT_COUNT; ++f) EXPECT_NE(t->quantize[f], nullptr) << "quantize[" << f << "]";
}

// Each module holds only the instructions its row promises: AVX-512 (zmm or opmask registers)
// only in a plugin that requires avx512f, VNNI only in those that require a VNNI feature (and in
// each of them but the tile builds), AMX tiles only in those that require amx_int8.
TEST_P(SimdModule, UsesOnlyItsOwnIsa) {
    const std::string name = GetParam();
    const std::vector<std::string> features = row_features(name);
    auto requires_feature = [&features](const char *f) {
        return std::find(features.begin(), features.end(), f) != features.end();
    };
    const std::string path = kBackendDir + "/memra-backend-" + name + ".so";
    int status = 0;
    const std::string dis = run_command("objdump -d --no-show-raw-insn '" + path + "' 2>&1", &status);
    ASSERT_EQ(status, 0) << dis;
    auto count = [&dis](const std::string &needle) {
        size_t n = 0;
        for (size_t at = dis.find(needle); at != std::string::npos; at = dis.find(needle, at + 1)) ++n;
        return n;
    };
    // The tile builds' integer dots are tile instructions; every other build's, vpmaddubsw (its
    // scaled dots) and nothing of AMX.
    if (requires_feature("amx_int8")) {
        EXPECT_GT(count("\ttdpbsud"), 0u) << name << ": no AMX-INT8 tile dots in the module?";
        EXPECT_GT(count("\ttilerelease"), 0u) << name << " never gives the tile state back";
    } else {
        EXPECT_GT(count("vpmaddubsw"), 0u) << name << ": no SIMD kernels in the module?";
        EXPECT_EQ(count("\ttdpb") + count("\ttileloadd") + count("\tldtilecfg"), 0u) << name << " contains AMX code";
    }
    if (!requires_feature("avx512f")) {
        EXPECT_EQ(count("%zmm"), 0u) << name << " contains AVX-512 (zmm) code";
        EXPECT_EQ(count("{%k"), 0u) << name << " contains AVX-512 (masked) code";
        EXPECT_EQ(count("{evex}"), 0u) << name << " contains EVEX-encoded code";
    } else {
        EXPECT_GT(count("%zmm"), 0u) << "the " << name << " module has no 512-bit code";
    }
    // A tile build requires avx512_vnni with the avx512 plugin's features but needs no vpdpbusd:
    // its dense tiles take every integer dot (simd/tile_forms.h).
    if (!requires_feature("avx_vnni") && !requires_feature("avx512_vnni")) {
        EXPECT_EQ(count("vpdp"), 0u) << "the " << name << " module contains VNNI code";
    } else if (!requires_feature("amx_int8")) {
        EXPECT_GT(count("vpdpbusd"), 0u) << name << " has no vpdpbusd";
    }
    if (!requires_feature("avx512_bf16")) {
        EXPECT_EQ(count("vdpbf16ps"), 0u) << "the " << name << " module contains AVX512_BF16 code";
    } else {
        EXPECT_GT(count("vdpbf16ps"), 0u) << name << " has no vdpbf16ps";
    }
}

INSTANTIATE_TEST_SUITE_P(Plugins, SimdModule, ::testing::ValuesIn(kPlugins),
                         [](const auto &i) { return std::string(i.param); });

}  // namespace
}  // namespace memra::plugin_tests
