#include "settings.h"

#include <sys/stat.h>

#include <cctype>
#include <cstdlib>

#include "cpu_features.h"

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

}  // namespace

const char *known_backend_names() { return "auto, scalar, avx2, avxvnni, avx512"; }

Settings read_settings() {
    Settings s;

    const std::string backend = env("MEMRA_CPU_EXPERT_BACKEND");
    if (!backend.empty()) {
        // Whether a well-formed name is installed and runnable is for the selection to decide;
        // here only a value that cannot be any backend's name is refused.
        if (is_backend_name(backend))
            s.backend = backend;
        else
            s.problems.push_back("MEMRA_CPU_EXPERT_BACKEND='" + backend +
                                 "' is not a backend name (expected one of " +
                                 known_backend_names() + ")");
    }

    s.plugin_dir = env("MEMRA_CPU_EXPERT_PLUGIN_DIR");
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
    const std::string disabled = env("MEMRA_CPU_EXPERT_DISABLE_FEATURES");
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
    return s;
}

}  // namespace memra
