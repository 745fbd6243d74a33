// The SIMD builds under test and their tables (simd_builds.h).
#include "simd_builds.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "memra_backend_rows.h"
#include "test_util.h"

extern "C" const memra_backend_v2 *memra_simd_amx_emulated_backend(void);

namespace memra::plugin_tests {
namespace {

const std::string kBackendDir = MEMRA_SIMD_BACKEND_DIR;

// The test-only builds, linked into the test binary.
struct StaticBuild {
    const char *name;
    const memra_backend_v2 *(*table)(void);
};
constexpr StaticBuild kStaticBuilds[] = {{"amx_emulated", memra_simd_amx_emulated_backend}};

// The AMX tile data state must be granted to the process before a tile instruction runs
// (Linux 5.16+: arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)); the core asks for it in
// its CPU detection, and these tests, which dlopen the module without the core, ask themselves.
bool amx_tile_state_granted() {
    static const bool granted = [] {
        constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
        return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
    }();
    return granted;
}


// The CPU's feature flags as Linux reports them (/proc/cpuinfo "flags": CPUID as the kernel
// sees it, with features the OS does not enable, e.g. AVX without XSAVE of YMM, removed).
// MEMRA_TEST_HIDE_CPU_FEATURES="avx_vnni ..." hides some, to try the skips of another CPU
// (e.g. "avx_vnni" for an AMD Zen 4: AVX-512 VNNI but no AVX-VNNI).
const std::set<std::string> &cpu_flags() {
    static const std::set<std::string> flags = [] {
        std::set<std::string> f;
        std::ifstream in("/proc/cpuinfo");
        std::string line;
        while (std::getline(in, line)) {
            if (line.rfind("flags", 0) != 0) continue;
            std::istringstream words(line.substr(line.find(':') + 1));
            for (std::string w; words >> w;) f.insert(w);
            break;
        }
        if (const char *hide = std::getenv("MEMRA_TEST_HIDE_CPU_FEATURES")) {
            std::istringstream words(hide);
            for (std::string w; words >> w;) f.erase(w);
        }
        return f;
    }();
    return flags;
}

}  // namespace

// The rows of plugins/backends.table other than the scalar reference: the shipped plugins, and
// with the test-only builds the SIMD builds.
std::vector<const char *> simd_rows(bool with_test_builds) {
    std::vector<const char *> names;
    for (const memra_backend_row &row : memra_backend_rows)
        if (std::string(row.name) != "scalar" && (with_test_builds || row.shipped())) names.push_back(row.name);
    return names;
}

// The features a row requires.
std::vector<std::string> row_features(const std::string &name) {
    std::vector<std::string> features;
    for (const memra_backend_row &row : memra_backend_rows)
        if (name == row.name) {
            std::istringstream words(row.features);
            for (std::string w; words >> w;) features.push_back(w);
        }
    return features;
}


// "" when the CPU has all of them, else the missing ones.
std::string missing_features(const std::vector<std::string> &features) {
    std::string missing;
    for (const std::string &f : features)
        if (!cpu_flags().count(f)) missing += (missing.empty() ? "" : " ") + f;
    return missing;
}

std::vector<std::string> manifest_requires(const std::string &name) {
    std::ifstream in(kBackendDir + "/memra-backend-" + name + ".manifest");
    std::vector<std::string> req;
    for (std::string line; std::getline(in, line);)
        if (line.rfind("requires ", 0) == 0) {
            std::istringstream words(line.substr(9));
            for (std::string w; words >> w;) req.push_back(w);
        }
    return req;
}

// The table of build `name`, or nullptr with *why set; *cpu_lacks says whether the reason is
// only that this CPU lacks a feature the build requires (a skip). Anything else (no manifest,
// a module that does not load, no entry point) is a broken plugin, and its tests fail.
const memra_backend_v2 *build_table(const std::string &name, std::string *why, bool *cpu_lacks) {
    *cpu_lacks = false;
    static std::map<std::string, const memra_backend_v2 *> loaded;
    for (const StaticBuild &b : kStaticBuilds)
        if (name == b.name) {
            const std::string missing = missing_features(row_features(name));
            if (!missing.empty()) {
                *why = "this CPU lacks " + missing + " (needed by the " + name + " test build)";
                *cpu_lacks = true;
                return nullptr;
            }
            return b.table();
        }
    const std::vector<std::string> req = manifest_requires(name);
    if (req.empty()) {
        *why = "no manifest for " + name + " in " + kBackendDir;
        return nullptr;
    }
    const std::string missing = missing_features(req);
    if (!missing.empty()) {
        *why = "this CPU lacks " + missing + ", required by the " + name + " plugin";
        *cpu_lacks = true;
        return nullptr;
    }
    if (std::find(req.begin(), req.end(), "amx_tile") != req.end() && !amx_tile_state_granted()) {
        *why = "the OS refused this process the AMX tile state (arch_prctl ARCH_REQ_XCOMP_PERM), needed by the " +
               name + " plugin";
        *cpu_lacks = true;
        return nullptr;
    }
    auto it = loaded.find(name);
    if (it != loaded.end()) return it->second;
    const std::string path = kBackendDir + "/memra-backend-" + name + ".so";
    void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        *why = std::string("dlopen failed: ") + dlerror();
        return nullptr;
    }
    void *sym = dlsym(h, MEMRA_BACKEND_ENTRY_SYMBOL);
    memra_backend_entry_fn entry;
    std::memcpy(&entry, &sym, sizeof entry);
    const memra_backend_v2 *t = entry ? entry() : nullptr;
    if (!t) *why = "no entry point / table in " + path;
    loaded[name] = t;
    return t;
}

void use_build(const std::string &name, const memra_backend_v2 *&table) {
    std::string why;
    bool cpu_lacks = false;
    table = build_table(name, &why, &cpu_lacks);
    if (!table && cpu_lacks) GTEST_SKIP() << why;
    ASSERT_NE(table, nullptr) << "broken plugin: " << why;
}

const memra_kernel_v2 *find_kernel(const memra_backend_v2 *t, int32_t qtype) {
    for (int32_t i = 0; i < t->kernel_count; ++i)
        if (t->kernels[i].qtype == qtype) return &t->kernels[i];
    return nullptr;
}

bool serves_token_path(const memra_backend_v2 *t) {
    for (int32_t i = 0; i < t->kernel_count; ++i)
        if (t->kernels[i].gemv) return true;
    return false;
}

std::string first_difference(const float *got, const float *want, size_t count) {
    for (size_t i = 0; i < count; ++i)
        if (bits(got[i]) != bits(want[i])) {
            std::ostringstream s;
            s << "first difference at " << i << ": got " << got[i] << " (0x" << std::hex << bits(got[i])
              << ") want " << want[i] << " (0x" << bits(want[i]) << ")";
            return s.str();
        }
    return "";
}

}  // namespace memra::plugin_tests
