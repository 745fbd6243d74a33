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
    uint64_t cache_bytes = 0;          // MEMRA_CPU_EXPERT_CACHE_BYTES (default_cache_bytes())
    bool direct_io = false;            // MEMRA_CPU_EXPERT_DIRECT_IO=1: file weights bypass the page cache
    bool numa = true;                  // MEMRA_CPU_EXPERT_NUMA=auto (default) or off (docs/numa.md)
    std::string numa_topology;         // MEMRA_CPU_EXPERT_NUMA_TOPOLOGY, fake nodes for tests ("" = not set)
    std::string tuning = "auto";       // MEMRA_CPU_EXPERT_TUNING: auto, intel, amd, generic (dispatch/tuning.h)
    bool secure_execution = false;     // setuid, setgid or file capabilities (see read_settings)
    std::vector<std::string> problems; // fatal: the library refuses to compute
    std::vector<std::string> warnings; // printed to stderr once
    std::vector<std::string> log_notes;  // printed before the MEMRA_CPU_EXPERT_LOG=1 line
};

// Reads the process environment. In a secure-execution process (glibc's AT_SECURE, which is
// what secure_getenv consults: setuid, setgid, file capabilities) whoever set the environment
// may have fewer privileges than the process, so the variables that choose code or files
// (the backend, the plugin directory, the CPU features, the cache budget, the fake NUMA
// topology, the kernel tuning) are not read, as
// ld.so does not read LD_LIBRARY_PATH there; a log note says so. MEMRA_CPU_EXPERT_LOG still is.
Settings read_settings();

// As read_settings() in a process with (true) or without (false) secure execution, whatever
// this one is: lets a test see the secure branch without a setuid binary.
Settings read_settings(bool secure_execution);

// "6442450944", "512K", "64M", "6G" (binary multiples; K/M/G in either case) to bytes; false for
// anything else, an empty string and values beyond 2^64 - 1 included.
bool parse_byte_size(const std::string &text, uint64_t &bytes);

// The weight cache's budget when MEMRA_CPU_EXPERT_CACHE_BYTES is unset: a quarter of the memory
// this process may use (physical memory, or the cgroup's limit when lower), at most 64 GiB.
uint64_t default_cache_bytes();

}  // namespace memra
