// A secure-execution process (setuid, setgid, file capabilities: glibc's AT_SECURE) reads none
// of the variables that choose code or files, says so in the load log, and uses the plugins
// installed beside the library (docs/security.md). In-process, read_settings(true) shows each
// variable ignored on its own; end to end, a setgid copy of memra-abi-client shows that the
// library takes that branch by itself, from the kernel's AT_SECURE.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "backend_inventory.h"
#include "client_checks.h"
#include "dispatch/settings.h"

namespace memra::tests {
namespace {

namespace fs = std::filesystem;

// Each value is one the library refuses (status 5) when it reads it.
const std::map<std::string, std::string> kChoosing = {
    {"MEMRA_CPU_EXPERT_BACKEND", "AVX9"},
    {"MEMRA_CPU_EXPERT_PLUGIN_DIR", "/nonexistent/memra"},
    {"MEMRA_CPU_EXPERT_DISABLE_FEATURES", "sse9"},
    {"MEMRA_CPU_EXPERT_CACHE_BYTES", "lots"},
    {"MEMRA_CPU_EXPERT_NUMA_TOPOLOGY", "0:0;0:1"},
    {"MEMRA_CPU_EXPERT_TUNING", "zen9"},
};

// Sets one variable for the test's duration.
struct ScopedEnv {
    std::string name;
    ScopedEnv(const std::string &n, const std::string &value) : name(n) { ::setenv(n.c_str(), value.c_str(), 1); }
    ~ScopedEnv() { ::unsetenv(name.c_str()); }
};

class ChoosingVariable : public ::testing::TestWithParam<std::string> {};

TEST_P(ChoosingVariable, IsReadNormallyAndIgnoredUnderSecureExecution) {
    const ScopedEnv set(GetParam(), kChoosing.at(GetParam()));
    const ScopedEnv log("MEMRA_CPU_EXPERT_LOG", "1");
    const Settings normal = read_settings(false);
    ASSERT_FALSE(normal.problems.empty()) << GetParam() << " was not read at all";
    EXPECT_NE(normal.problems.front().find(GetParam()), std::string::npos) << normal.problems.front();
    EXPECT_TRUE(normal.log_notes.empty());

    const Settings secure = read_settings(true);
    EXPECT_TRUE(secure.problems.empty()) << secure.problems.front();
    EXPECT_EQ(secure.backend, "auto");
    EXPECT_EQ(secure.plugin_dir, "");
    EXPECT_EQ(secure.disabled_features, 0u);
    EXPECT_EQ(secure.cache_bytes, default_cache_bytes());
    EXPECT_EQ(secure.numa_topology, "");
    EXPECT_EQ(secure.tuning, "auto");
    EXPECT_TRUE(secure.log) << "MEMRA_CPU_EXPERT_LOG chooses no code and must still work";
    ASSERT_EQ(secure.log_notes.size(), 1u);
    EXPECT_NE(secure.log_notes[0].find("set but ignored: " + GetParam()), std::string::npos) << secure.log_notes[0];
}

INSTANTIATE_TEST_SUITE_P(SecureExecution, ChoosingVariable,
                         ::testing::Values("MEMRA_CPU_EXPERT_BACKEND", "MEMRA_CPU_EXPERT_PLUGIN_DIR",
                                           "MEMRA_CPU_EXPERT_DISABLE_FEATURES", "MEMRA_CPU_EXPERT_CACHE_BYTES",
                                           "MEMRA_CPU_EXPERT_NUMA_TOPOLOGY", "MEMRA_CPU_EXPERT_TUNING"),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                             return info.param.substr(std::string("MEMRA_CPU_EXPERT_").size());
                         });

// This test process is no secure-execution one: read_settings() reads the variables.
TEST(SecureExecution, AnOrdinaryProcessReadsTheVariables) {
    const ScopedEnv set("MEMRA_CPU_EXPERT_BACKEND", "avx2");
    EXPECT_EQ(read_settings().backend, "avx2");
    EXPECT_FALSE(read_settings().secure_execution);
}

// A setgid copy of the client (group nogroup, which the test process is not running as): the
// kernel sets AT_SECURE. Every variable holds a value the library would refuse, so it computes
// only if it read none of them.
TEST(SecureExecution, SetgidProcessIgnoresTheVariables) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to make a setgid copy for another group (CI runs as root)";
    constexpr gid_t kOtherGroup = 65534;  // nogroup
    if (::getgid() == kOtherGroup) GTEST_SKIP() << "already running as group " << kOtherGroup;
    TempDir dir;
    struct statvfs fs_flags;
    ASSERT_EQ(::statvfs(dir.path.c_str(), &fs_flags), 0);
    if (fs_flags.f_flag & ST_NOSUID) GTEST_SKIP() << dir.path << " is on a nosuid file system";
    const fs::path client = dir.path / "memra-abi-client";
    fs::copy_file(MEMRA_TEST_ABI_CLIENT, client);
    ASSERT_EQ(::chown(client.c_str(), 0, kOtherGroup), 0);
    ASSERT_EQ(::chmod(client.c_str(), 02755), 0);

    std::map<std::string, std::string> env = kChoosing;
    env["MEMRA_CPU_EXPERT_LOG"] = "1";
    expect_unusable(run_client(env), {"MEMRA_CPU_EXPERT_"});  // the control: read, refused

    const ProcessResult r = run_client(env, MEMRA_TEST_LIBRARY, client.string());
    expect_serves(r, best_usable_backend(MEMRA_TEST_BACKEND_DIR), "auto");
    // The load log: one line saying what was ignored, then the usual line.
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 2) << r.err;
    EXPECT_EQ(r.err.rfind("memra-cpu-experts: secure-execution process", 0), 0u) << r.err;
    for (const auto &[name, value] : kChoosing) EXPECT_NE(r.err.find(name), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("only the plugins installed beside the library are used"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace memra::tests
