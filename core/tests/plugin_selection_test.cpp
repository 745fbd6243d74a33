// Backend selection through the environment (CONTRACT.md, "Environment"), each case in its own
// process running memra-abi-client (client_checks.h). The expectations come from
// backend_inventory (the manifests installed and /proc/cpuinfo), so the suite holds on any CPU
// and with any set of plugins built.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "backend_inventory.h"
#include "client_checks.h"

namespace memra::tests {
namespace {

namespace fs = std::filesystem;

TEST(PluginSelection, AutoPicksTheBestUsableBackend) {
    const std::string best = best_usable_backend(MEMRA_TEST_BACKEND_DIR);
    ASSERT_FALSE(best.empty()) << "no usable plugin in " << MEMRA_TEST_BACKEND_DIR;
    // Unset, empty and "auto" all mean auto.
    expect_serves(run_client({}), best, "auto");
    expect_serves(run_client({{"MEMRA_CPU_EXPERT_BACKEND", ""}}), best, "auto");
    expect_serves(run_client({{"MEMRA_CPU_EXPERT_BACKEND", "auto"}}), best, "auto");
}

class ForcedBackend : public ::testing::TestWithParam<std::string> {};

TEST_P(ForcedBackend, RunsIfInstalledAndSupportedElseStatus5) {
    const std::string name = GetParam();
    const ProcessResult r = run_client({{"MEMRA_CPU_EXPERT_BACKEND", name}});
    const std::vector<InstalledBackend> installed = installed_backends(MEMRA_TEST_BACKEND_DIR);
    const InstalledBackend *b = find_backend(installed, name);
    if (!b) {
        SCOPED_TRACE(name + " is not installed");
        expect_unusable(r, {"MEMRA_CPU_EXPERT_BACKEND", name});
    } else if (const std::vector<std::string> missing = missing_features(*b); !missing.empty()) {
        SCOPED_TRACE(name + " needs " + missing.front() + ", which this CPU lacks");
        expect_unusable(r, {"MEMRA_CPU_EXPERT_BACKEND", name, missing.front()});
    } else {
        expect_serves(r, name, "forced by MEMRA_CPU_EXPERT_BACKEND");
    }
}

INSTANTIATE_TEST_SUITE_P(PluginSelection, ForcedBackend, ::testing::ValuesIn(backend_names()),
                         [](const ::testing::TestParamInfo<std::string> &info) { return info.param; });

// A CPU that lacks what a plugin needs, simulated on any CPU: MEMRA_CPU_EXPERT_DISABLE_FEATURES
// hides features from the selection. Forcing a plugin that needs a hidden feature is status 5
// naming the feature, and the plugin is never loaded (so it cannot SIGILL).
TEST(PluginSelection, ForcedBackendTheCpuCannotRunIsStatus5) {
    for (const InstalledBackend &b : installed_backends(MEMRA_TEST_BACKEND_DIR)) {
        ASSERT_FALSE(b.requires_features.empty()) << b.name << " declares no requirement";
        const std::string hidden = b.requires_features.front();
        SCOPED_TRACE(b.name + " with " + hidden + " hidden");
        expect_unusable(run_client({{"MEMRA_CPU_EXPERT_BACKEND", b.name},
                                    {"MEMRA_CPU_EXPERT_DISABLE_FEATURES", hidden}}),
                        {"MEMRA_CPU_EXPERT_BACKEND", b.name, "cpu lacks", hidden});
    }
}

// Under auto, hiding every feature the scalar backend does not need (the x86-64 baseline is
// all it needs) leaves exactly the scalar backend.
TEST(PluginSelection, AutoOnABaselineCpuPicksScalar) {
    expect_serves(run_client({{"MEMRA_CPU_EXPERT_DISABLE_FEATURES", MEMRA_TEST_FEATURES_BEYOND_SCALAR}}),
                  "scalar", "auto");
}

TEST(PluginSelection, UnknownDisabledFeatureIsReported) {
    expect_unusable(run_client({{"MEMRA_CPU_EXPERT_DISABLE_FEATURES", "avx2,sse9"}}),
                    {"MEMRA_CPU_EXPERT_DISABLE_FEATURES", "sse9"});
}

// A log value other than 0 or 1 is reported on stderr, not ignored; computing still works.
TEST(PluginSelection, BadLogValueIsReported) {
    const ProcessResult r = run_client({{"MEMRA_CPU_EXPERT_LOG", "yes"}});
    ASSERT_EQ(r.exit_code, 0) << show(r);
    EXPECT_NE(r.err.find("MEMRA_CPU_EXPERT_LOG='yes'"), std::string::npos) << r.err;
}

TEST(PluginSelection, UnknownBackendNameListsTheValidOnes) {
    std::vector<std::string> mentions = {"MEMRA_CPU_EXPERT_BACKEND", "avx9"};
    for (const std::string &n : backend_names()) mentions.push_back(n);
    expect_unusable(run_client({{"MEMRA_CPU_EXPERT_BACKEND", "avx9"}}), mentions);
}

TEST(PluginSelection, PluginDirThatDoesNotExistIsReported) {
    expect_unusable(run_client({{"MEMRA_CPU_EXPERT_PLUGIN_DIR", "/nonexistent/memra"}}),
                    {"MEMRA_CPU_EXPERT_PLUGIN_DIR", "/nonexistent/memra"});
}

TEST(PluginSelection, PluginDirThatIsAFileIsReported) {
    TempDir dir;
    const fs::path file = dir.path / "not-a-directory";
    std::ofstream(file) << "x";
    expect_unusable(run_client({{"MEMRA_CPU_EXPERT_PLUGIN_DIR", file.string()}}),
                    {"MEMRA_CPU_EXPERT_PLUGIN_DIR", file.string()});
}

TEST(PluginSelection, EmptyPluginDirFallsBackToTheLibrarysOwnLayout) {
    TempDir dir;
    expect_serves(run_client({{"MEMRA_CPU_EXPERT_PLUGIN_DIR", dir.path.string()}}),
                  best_usable_backend(MEMRA_TEST_BACKEND_DIR), "auto");
}

// The library copied alone: no plugin beside it and none elsewhere: status 5, no crash.
TEST(PluginSelection, LibraryWithoutAnyPluginIsUnusable) {
    TempDir dir;
    const fs::path lib = dir.path / "libmemra-cpu-experts.so.2";
    fs::copy_file(MEMRA_TEST_LIBRARY, lib);
    expect_unusable(run_client({}, lib.string()), {});
}

// ... and MEMRA_CPU_EXPERT_PLUGIN_DIR is searched first, so it makes that copy usable again.
TEST(PluginSelection, PluginDirIsSearched) {
    TempDir dir;
    const fs::path lib = dir.path / "libmemra-cpu-experts.so.2";
    fs::copy_file(MEMRA_TEST_LIBRARY, lib);
    expect_serves(run_client({{"MEMRA_CPU_EXPERT_PLUGIN_DIR", MEMRA_TEST_BACKEND_DIR}}, lib.string()),
                  best_usable_backend(MEMRA_TEST_BACKEND_DIR), "auto");
}

// Only memra-backend-*.manifest files are manifests: the library says nothing about the other
// entries of a plugin directory (., .., the modules, a stray file).
TEST(PluginSelection, OnlyManifestFilesAreRead) {
    TempDir dir;
    for (const InstalledBackend &b : installed_backends(MEMRA_TEST_BACKEND_DIR)) {
        fs::copy_file(fs::path(MEMRA_TEST_BACKEND_DIR) / ("memra-backend-" + b.name + ".manifest"),
                      dir.path / ("memra-backend-" + b.name + ".manifest"));
        fs::copy_file(fs::path(MEMRA_TEST_BACKEND_DIR) / b.module, dir.path / b.module);
    }
    std::ofstream(dir.path / "README") << "not a manifest\n";
    fs::create_directory(dir.path / "old");
    const ProcessResult r = run_client({{"MEMRA_CPU_EXPERT_PLUGIN_DIR", dir.path.string()}});
    expect_serves(r, best_usable_backend(MEMRA_TEST_BACKEND_DIR), "auto");
    const std::string line = describe_of(r);
    for (const char *entry : {"/README", "/old", "/.", ".so:"})
        EXPECT_EQ(line.find(dir.path.string() + entry), std::string::npos) << "mentions " << entry << ": " << line;
}

TEST(PluginSelection, LogPrintsOneLineAtLoad) {
    const ProcessResult r = run_client({{"MEMRA_CPU_EXPERT_LOG", "1"}});
    ASSERT_EQ(r.exit_code, 0) << show(r);
    ASSERT_FALSE(r.err.empty()) << "MEMRA_CPU_EXPERT_LOG=1 printed nothing";
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.back(), '\n') << r.err;
    EXPECT_TRUE(printable(r.err.substr(0, r.err.size() - 1))) << r.err;
    EXPECT_NE(r.err.find(best_usable_backend(MEMRA_TEST_BACKEND_DIR)), std::string::npos) << r.err;
}

TEST(PluginSelection, NoLogPrintsNothing) {
    const ProcessResult r = run_client({});
    ASSERT_EQ(r.exit_code, 0) << show(r);
    EXPECT_EQ(r.err, "");
}

}  // namespace
}  // namespace memra::tests
