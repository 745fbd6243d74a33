// Which plugin files the library loads (docs/security.md): a manifest or module only when it and
// the directory holding it are owned by root or the effective user and not writable by group or
// others, never through a symbolic link, and a module only by a plain file name of the
// manifest's directory. Each case builds a plugin directory holding a copy of the scalar plugin,
// breaks one rule, and forces the scalar backend with MEMRA_CPU_EXPERT_PLUGIN_DIR searched first:
// the refused copy shadows the built one, so the forced backend fails with status 5 and the
// reason, where a loader without the rule would have loaded the copy and computed.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "backend_inventory.h"
#include "client_checks.h"
#include "dispatch/cpu_features.h"
#include "dispatch/plugin_loader.h"

namespace memra::tests {
namespace {

namespace fs = std::filesystem;

const std::string kManifest = "memra-backend-scalar.manifest";
constexpr uid_t kOtherUser = 65534;  // nobody

std::string scalar_module() {
    const std::vector<InstalledBackend> all = installed_backends(MEMRA_TEST_BACKEND_DIR);
    const InstalledBackend *scalar = find_backend(all, "scalar");
    return scalar ? scalar->module : "";
}

void set_mode(const fs::path &p, mode_t mode) { ASSERT_EQ(::chmod(p.c_str(), mode), 0) << p; }

// A copy of the built file `name` at `to`, with `mode` whatever the umask.
void copy_built(const std::string &name, const fs::path &to, mode_t mode) {
    fs::copy_file(fs::path(MEMRA_TEST_BACKEND_DIR) / name, to);
    set_mode(to, mode);
}

// tmp/plugins (0755) holding the scalar plugin's manifest (0644) and module (0755): trusted.
struct PluginDir {
    TempDir tmp;
    fs::path dir = tmp.path / "plugins";
    std::string module = scalar_module();

    PluginDir() {
        fs::create_directory(dir);
        set_mode(dir, 0755);
        copy_built(kManifest, dir / kManifest, 0644);
        copy_built(module, dir / module, 0755);
    }
    fs::path manifest_path() const { return dir / kManifest; }
    fs::path module_path() const { return dir / module; }

    ProcessResult run(const std::string &backend = "scalar") const {
        return run_client({{"MEMRA_CPU_EXPERT_BACKEND", backend}, {"MEMRA_CPU_EXPERT_PLUGIN_DIR", dir.string()}});
    }
    // The scalar backend forced fails because its copy here was refused, saying why.
    void expect_refused(const std::vector<std::string> &why) const {
        std::vector<std::string> mentions = {"MEMRA_CPU_EXPERT_BACKEND=scalar cannot be used"};
        mentions.insert(mentions.end(), why.begin(), why.end());
        expect_unusable(run(), mentions);
    }
};

bool can_chown() { return ::geteuid() == 0; }

#define SKIP_UNLESS_ROOT() \
    if (!can_chown()) GTEST_SKIP() << "needs root to create files owned by another user (CI runs as root)"

// The control: the same copy, trusted, is what the forced backend runs.
TEST(PluginTrust, TrustedCopyIsLoaded) {
    PluginDir p;
    ASSERT_FALSE(p.module.empty()) << "no scalar plugin in " << MEMRA_TEST_BACKEND_DIR;
    expect_serves(p.run(), "scalar", "forced by MEMRA_CPU_EXPERT_BACKEND");
}

struct DirMode {
    const char *name;
    mode_t mode;
    const char *why;
};

class WritableDirectory : public ::testing::TestWithParam<DirMode> {};

// A sticky world-writable directory (/tmp) is no exception: anyone may add a plugin there.
TEST_P(WritableDirectory, IsRefused) {
    PluginDir p;
    set_mode(p.dir, GetParam().mode);
    p.expect_refused({"untrusted: directory " + p.dir.string() + " is writable by " + GetParam().why});
}

INSTANTIATE_TEST_SUITE_P(PluginTrust, WritableDirectory,
                         ::testing::Values(DirMode{"group", 0775, "group (mode 0775)"},
                                           DirMode{"others", 0757, "others (mode 0757)"},
                                           DirMode{"world", 0777, "group and others (mode 0777)"},
                                           DirMode{"sticky_world", 01777, "group and others (mode 1777)"}),
                         [](const ::testing::TestParamInfo<DirMode> &info) { return std::string(info.param.name); });

// Under auto the refused plugin is reported like any unusable one, in the describe line (the
// load log's line), and the library computes with the others.
TEST(PluginTrust, RefusedPluginIsReportedUnderAuto) {
    PluginDir p;
    set_mode(p.dir, 0775);
    const ProcessResult r = p.run("auto");
    ASSERT_EQ(r.exit_code, 0) << show(r);
    EXPECT_NE(describe_of(r).find("scalar (untrusted: directory " + p.dir.string() + " is writable by group"),
              std::string::npos) << describe_of(r);
}

TEST(PluginTrust, GroupWritableModuleIsRefused) {
    PluginDir p;
    set_mode(p.module_path(), 0775);
    p.expect_refused({"untrusted: " + p.module_path().string() + " is writable by group (mode 0775)"});
}

TEST(PluginTrust, WorldWritableManifestIsRefused) {
    PluginDir p;
    set_mode(p.manifest_path(), 0646);
    p.expect_refused({"untrusted: " + p.manifest_path().string() + " is writable by others (mode 0646)"});
}

TEST(PluginTrust, ModuleOwnedByAnotherUserIsRefused) {
    SKIP_UNLESS_ROOT();
    PluginDir p;
    ASSERT_EQ(::chown(p.module_path().c_str(), kOtherUser, kOtherUser), 0);
    p.expect_refused({"untrusted: " + p.module_path().string() + " is owned by uid 65534"});
}

TEST(PluginTrust, ManifestOwnedByAnotherUserIsRefused) {
    SKIP_UNLESS_ROOT();
    PluginDir p;
    ASSERT_EQ(::chown(p.manifest_path().c_str(), kOtherUser, kOtherUser), 0);
    p.expect_refused({"untrusted: " + p.manifest_path().string() + " is owned by uid 65534"});
}

TEST(PluginTrust, DirectoryOwnedByAnotherUserIsRefused) {
    SKIP_UNLESS_ROOT();
    PluginDir p;
    ASSERT_EQ(::chown(p.dir.c_str(), kOtherUser, kOtherUser), 0);
    p.expect_refused({"untrusted: directory " + p.dir.string() + " is owned by uid 65534"});
}

// A trusted directory links to a file that is itself fine (root's or ours, mode 0755/0644) but
// lies in a world-writable directory, where anyone could have put it: refused, whichever of the
// two files is the link.
class LinkedFile : public ::testing::TestWithParam<bool> {};

TEST_P(LinkedFile, IsRefused) {
    const bool link_module = GetParam();
    PluginDir p;
    const fs::path open_dir = p.tmp.path / "anyone-writes-here";
    fs::create_directory(open_dir);
    set_mode(open_dir, 0777);
    const fs::path link = link_module ? p.module_path() : p.manifest_path();
    const fs::path target = open_dir / link.filename();
    fs::rename(link, target);
    fs::create_symlink(target, link);
    p.expect_refused({"untrusted: " + link.string() + " is a symbolic link"});
}

INSTANTIATE_TEST_SUITE_P(PluginTrust, LinkedFile, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool> &info) { return info.param ? "module" : "manifest"; });

// The manifest may name only a file of its own directory. The module it points at elsewhere is
// a trusted copy, so only the name rule stands between it and the loader.
class ModuleName : public ::testing::TestWithParam<std::string> {};

TEST_P(ModuleName, OutsideTheManifestsDirectoryIsRefused) {
    PluginDir p;
    fs::rename(p.module_path(), p.tmp.path / p.module);  // tmp (mkdtemp: 0700, ours) is trusted too
    const std::string &kind = GetParam();
    const std::string name = kind == "parent"   ? "../" + p.module
                           : kind == "absolute" ? (p.tmp.path / p.module).string()
                           : kind == "dotdot"   ? ".."
                                                : "." + p.module;
    // The built manifest with only its module line changed.
    std::ifstream in(p.manifest_path());
    std::string text;
    for (std::string line; std::getline(in, line);) text += (line.rfind("module ", 0) == 0 ? "module " + name : line) + "\n";
    in.close();
    std::ofstream(p.manifest_path(), std::ios::trunc) << text;
    p.expect_refused({"bad manifest: ", "module '" + name + "' is not a file name beside the manifest"});
}

INSTANTIATE_TEST_SUITE_P(PluginTrust, ModuleName, ::testing::Values("parent", "absolute", "dotdot", "hidden"),
                         [](const ::testing::TestParamInfo<std::string> &info) { return info.param; });

// In-process: two plugins loaded from two directories one after the other, the first kept
// loaded. Each must be the file its manifest's directory holds; the loader maps modules through
// /proc/self/fd/N, and glibc would hand the first module back for a reused N.
TEST(PluginTrust, EveryLoadMapsTheFileItChecked) {
    const uint64_t usable = detect_cpu_features().usable;
    std::vector<InstalledBackend> runnable;
    for (const InstalledBackend &b : installed_backends(MEMRA_TEST_BACKEND_DIR))
        if (missing_features(b).empty()) runnable.push_back(b);
    if (runnable.size() < 2) GTEST_SKIP() << "this CPU runs fewer than two of the built plugins";
    std::vector<TempDir> dirs(runnable.size());
    std::vector<std::vector<PluginRecord>> kept;
    for (size_t i = 0; i < runnable.size(); ++i) {
        const std::string manifest = "memra-backend-" + runnable[i].name + ".manifest";
        copy_built(manifest, dirs[i].path / manifest, 0644);
        copy_built(runnable[i].module, dirs[i].path / runnable[i].module, 0755);
        kept.push_back(load_plugins({dirs[i].path.string()}, usable));
        ASSERT_EQ(kept.back().size(), 1u);
        const PluginRecord &r = kept.back().front();
        ASSERT_TRUE(r.loaded) << r.status;
        EXPECT_EQ(std::string(r.table->name), runnable[i].name);
    }
}

}  // namespace
}  // namespace memra::tests
