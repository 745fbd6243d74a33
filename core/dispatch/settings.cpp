#include "dispatch/settings.h"

#include <sys/auxv.h>
#include <sys/stat.h>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>

#include "dispatch/cpu_features.h"
#include "dispatch/tuning.h"
#include "numa/topology.h"

namespace memra {
namespace {

const char *env(const char *name) {
    const char *value = std::getenv(name);
    return value ? value : "";
}

bool is_directory(const std::string &path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_backend_name(const std::string &s) {
    if (s.empty() || s.size() > 32) return false;
    for (unsigned char c : s)
        if (!(std::islower(c) || std::isdigit(c) || c == '_')) return false;
    return true;
}

// cgroup v2's memory.max of this process's cgroup ("max" or absent: no limit).
uint64_t cgroup_memory_limit() {
    std::ifstream cgroup("/proc/self/cgroup");
    std::string line, path;
    while (std::getline(cgroup, line))
        if (line.rfind("0::", 0) == 0) path = line.substr(3);
    std::ifstream max("/sys/fs/cgroup" + path + "/memory.max");
    std::string text;
    uint64_t limit = 0;
    if (max >> text && parse_byte_size(text, limit)) return limit;
    return UINT64_MAX;
}

}  // namespace

bool parse_byte_size(const std::string &text, uint64_t &bytes) {
    size_t digits = 0;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
    if (digits == 0 || digits > 20) return false;
    const std::string suffix = text.substr(digits);
    unsigned shift = 0;
    if (suffix == "K" || suffix == "k") shift = 10;
    else if (suffix == "M" || suffix == "m") shift = 20;
    else if (suffix == "G" || suffix == "g") shift = 30;
    else if (!suffix.empty()) return false;
    uint64_t value = 0;
    for (size_t i = 0; i < digits; ++i) {
        const uint64_t d = static_cast<uint64_t>(text[i] - '0');
        if (value > (UINT64_MAX - d) / 10) return false;
        value = value * 10 + d;
    }
    if (shift && value > (UINT64_MAX >> shift)) return false;
    bytes = value << shift;
    return true;
}

uint64_t default_cache_bytes() {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    uint64_t memory = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : uint64_t{4} << 30;
    memory = std::min(memory, cgroup_memory_limit());
    return std::min(memory / 4, uint64_t{64} << 30);
}

Settings read_settings() { return read_settings(::getauxval(AT_SECURE) != 0); }

Settings read_settings(bool secure_execution) {
    Settings s;
    s.secure_execution = secure_execution;
    // Every variable that chooses which code runs or which files are used is read here, and
    // only here. secure_getenv rather than getenv: were `secure_execution` ever false in a
    // secure process, glibc would still hand out nothing.
    std::string not_read, ignored;
    auto choosing = [&](const char *name) -> std::string {
        if (!secure_execution) {
            const char *value = ::secure_getenv(name);
            return value ? value : "";
        }
        not_read += (not_read.empty() ? "" : ", ") + std::string(name);
        if (*env(name)) ignored += (ignored.empty() ? "" : ", ") + std::string(name);
        return "";
    };

    const std::string backend = choosing("MEMRA_CPU_EXPERT_BACKEND");
    if (!backend.empty()) {
        // Whether a well-formed name is installed and runnable is for the selection to decide;
        // here only a value that cannot be any backend's name is refused.
        if (is_backend_name(backend))
            s.backend = backend;
        else
            s.problems.push_back("MEMRA_CPU_EXPERT_BACKEND='" + backend +
                                 "' is not a backend name (expected auto or an installed plugin's "
                                 "name: lower-case letters, digits and '_')");
    }

    s.plugin_dir = choosing("MEMRA_CPU_EXPERT_PLUGIN_DIR");
    if (!s.plugin_dir.empty() && !is_directory(s.plugin_dir))
        s.problems.push_back("MEMRA_CPU_EXPERT_PLUGIN_DIR='" + s.plugin_dir +
                             "' is not a directory");

    const std::string log = env("MEMRA_CPU_EXPERT_LOG");
    if (log == "1")
        s.log = true;
    else if (!log.empty() && log != "0")
        s.warnings.push_back("ignoring MEMRA_CPU_EXPERT_LOG='" + log + "' (expected 0 or 1)");

    // Pretend the CPU lacks some features (like oneDNN's ONEDNN_MAX_CPU_ISA): lets a packager or
    // a test check what a smaller CPU would select, and that nothing unsupported ever runs.
    const std::string disabled = choosing("MEMRA_CPU_EXPERT_DISABLE_FEATURES");
    std::string token;
    auto flush = [&] {
        if (token.empty()) return;
        int f = cpu_feature_from_name(token);
        if (f < 0)
            s.problems.push_back("MEMRA_CPU_EXPERT_DISABLE_FEATURES names unknown feature '" +
                                 token + "' (known: " + cpu_feature_list(~uint64_t{0}) + ")");
        else
            s.disabled_features |= MEMRA_CPU_BIT(f);
        token.clear();
    };
    for (char c : disabled) {
        if (c == ',' || c == ' ')
            flush();
        else
            token += c;
    }
    flush();

    const std::string cache = choosing("MEMRA_CPU_EXPERT_CACHE_BYTES");
    if (cache.empty())
        s.cache_bytes = default_cache_bytes();
    else if (!parse_byte_size(cache, s.cache_bytes))
        s.problems.push_back("MEMRA_CPU_EXPERT_CACHE_BYTES='" + cache +
                             "' is not a byte count (expected a number with an optional K, M or G "
                             "suffix, e.g. 8G; 0 disables the cache)");

    // Reads of file weights that bypass the page cache (docs/file-weights.md, "Direct I/O"). It
    // chooses no code and no file, so it is read in a secure-execution process too.
    const std::string direct = env("MEMRA_CPU_EXPERT_DIRECT_IO");
    if (direct == "1")
        s.direct_io = true;
    else if (!direct.empty() && direct != "0")
        s.problems.push_back("MEMRA_CPU_EXPERT_DIRECT_IO='" + direct + "' is not 0 or 1");

    // Whether a call's team spreads over NUMA nodes (docs/numa.md). It chooses no code and no
    // file, so it is read in a secure-execution process too.
    const std::string numa = env("MEMRA_CPU_EXPERT_NUMA");
    if (numa == "off")
        s.numa = false;
    else if (!numa.empty() && numa != "auto")
        s.problems.push_back("MEMRA_CPU_EXPERT_NUMA='" + numa + "' is not auto or off");

    // Fake nodes over real CPUs, so that the multi-node paths run on a one-node machine: a test
    // override, like the disabled features.
    s.numa_topology = choosing("MEMRA_CPU_EXPERT_NUMA_TOPOLOGY");
    std::vector<NumaNode> fake;
    std::string error;
    if (!s.numa_topology.empty() && !parse_fake_topology(s.numa_topology, fake, error)) {
        s.problems.push_back("MEMRA_CPU_EXPERT_NUMA_TOPOLOGY='" + s.numa_topology + "': " + error);
        s.numa_topology.clear();
    }

    // Which vendor's kernel forms the plugins use (dispatch/tuning.h; results are the same bits
    // either way): "auto" follows CPUID's vendor; the others let a test or a benchmark run the
    // other vendor's forms on this machine.
    const std::string tuning = choosing("MEMRA_CPU_EXPERT_TUNING");
    if (is_kernel_tuning_setting(tuning))
        s.tuning = tuning;
    else if (!tuning.empty())
        s.problems.push_back("MEMRA_CPU_EXPERT_TUNING='" + tuning + "' is not auto, intel, amd or generic");

    if (secure_execution)
        s.log_notes.push_back("secure-execution process (setuid, setgid or file capabilities): " + not_read +
                              " not read (" + (ignored.empty() ? "none of them is set" : "set but ignored: " + ignored) +
                              "); only the plugins installed beside the library are used");
    return s;
}

}  // namespace memra
