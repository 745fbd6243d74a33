// The environment variables the library honours, read once at load. A bad value is never
// ignored silently: it becomes a problem (every call then fails with status 5 and says why) or,
// for purely diagnostic variables, a warning printed once to stderr.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace memra {

struct Settings {
    std::string backend = "auto";      // MEMRA_CPU_EXPERT_BACKEND
    std::string plugin_dir;            // MEMRA_CPU_EXPERT_PLUGIN_DIR ("" = not set)
    bool log = false;                  // MEMRA_CPU_EXPERT_LOG=1
    uint64_t disabled_features = 0;    // MEMRA_CPU_EXPERT_DISABLE_FEATURES (testing/diagnosis)
    std::vector<std::string> problems; // fatal: the library refuses to compute
    std::vector<std::string> warnings; // printed to stderr once
};

// Reads the process environment.
Settings read_settings();

// The backend names the contract defines, for messages.
const char *known_backend_names();

}  // namespace memra
