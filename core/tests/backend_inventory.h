// What the library should find on this machine, worked out independently of it: the plugins
// installed in the build tree (their manifests) and the CPU features the kernel reports. Tests
// compare the library's choice with this instead of hard-coding what the build machine has.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace memra::tests {

// The backends this build installs (plugins/backends.table's core and plugin rows): the values
// MEMRA_CPU_EXPERT_BACKEND accepts besides "auto".
const std::vector<std::string> &backend_names();

struct InstalledBackend {
    std::string name;
    int priority = 0;
    std::string module;  // file name of the plugin, beside the manifest
    std::vector<std::string> requires_features;  // /proc/cpuinfo spellings
};

// The manifests (memra-backend-NAME.manifest) in dir.
std::vector<InstalledBackend> installed_backends(const std::string &dir);

// The "flags" of /proc/cpuinfo: what the CPU has and the kernel lets processes use.
std::set<std::string> cpu_flags();

// The required features this CPU lacks.
std::vector<std::string> missing_features(const InstalledBackend &b);

// The backend of dir that auto should pick: the highest priority among those this CPU runs.
std::string best_usable_backend(const std::string &dir);

// The installed backend of that name, or nullptr.
const InstalledBackend *find_backend(const std::vector<InstalledBackend> &all, const std::string &name);

}  // namespace memra::tests
