// What the built library shows the dynamic linker (CONTRACT.md: "exports only memra_* symbols"),
// read with the binutils tools a packager would use.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <sstream>

#include "backend_inventory.h"

namespace memra::tests {
namespace {

std::string capture(const std::string &command) {
    std::string out;
    FILE *p = popen(command.c_str(), "r");
    if (!p) return out;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    EXPECT_EQ(pclose(p), 0) << command;
    return out;
}

// The defined dynamic symbols, version suffixes (@@VERS) stripped, version-definition entries
// (type 'A') left out.
std::set<std::string> exported_symbols(const std::string &file) {
    std::set<std::string> names;
    std::istringstream lines(capture("nm -D --defined-only '" + file + "'"));
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::string addr, type, name;
        if (!(words >> addr >> type >> name)) continue;
        if (type == "A") continue;
        names.insert(name.substr(0, name.find('@')));
    }
    return names;
}

TEST(Symbols, LibraryExportsOnlyMemraSymbols) {
    const std::set<std::string> names = exported_symbols(MEMRA_TEST_LIBRARY);
    for (const std::string &n : names) EXPECT_EQ(n.rfind("memra_", 0), 0u) << "exported: " << n;
    for (const char *required : {"memra_cpu_experts_abi_version", "memra_cpu_moe_token_v2",
                                 "memra_cpu_expert_cache_stats_v2", "memra_cpu_expert_profile_stats_v2",
                                 "memra_cpu_expert_prefetch_v2", "memra_cpu_expert_rows_v2",
                                 "memra_cpu_experts_describe"})
        EXPECT_EQ(names.count(required), 1u) << required << " is not exported";
}

TEST(Symbols, SonameIsTheAbiMajor) {
    const std::string dynamic = capture("readelf -d '" + std::string(MEMRA_TEST_LIBRARY) + "'");
    EXPECT_NE(dynamic.find("(SONAME)"), std::string::npos) << dynamic;
    EXPECT_NE(dynamic.find("Library soname: [libmemra-cpu-experts.so.2]"), std::string::npos) << dynamic;
}

// Each plugin exports its entry point and nothing else of its own.
TEST(Symbols, PluginsExportOnlyTheirEntryPoint) {
    const std::vector<InstalledBackend> plugins = installed_backends(MEMRA_TEST_BACKEND_DIR);
    ASSERT_FALSE(plugins.empty());
    for (const InstalledBackend &b : plugins) {
        const std::string file = std::string(MEMRA_TEST_BACKEND_DIR) + "/" + b.module;
        const std::set<std::string> names = exported_symbols(file);
        EXPECT_EQ(names, std::set<std::string>{"memra_backend_entry_v2"}) << file;
    }
}

}  // namespace
}  // namespace memra::tests
