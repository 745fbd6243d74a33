// The backends a conformance run compares with the scalar reference, found exactly as the core
// finds them: the core's own plugin loader reads each manifest and loads a module only when this
// CPU (minus MEMRA_CPU_EXPERT_DISABLE_FEATURES) has every feature it requires, so a plugin this
// CPU cannot run is reported with the loader's reason and never mapped. Beside the shipped
// plugins come the test builds, modules of their own in a directory the library never searches:
// the AVX-VNNI kernels with vpdpbusd emulated on AVX2 ("avxvnni-emulated") and the AMX rows-path
// kernels with the tiles emulated in AVX-512 ("amx-emulated").
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dispatch/backend_registry.h"
#include "dispatch/cpu_features.h"
#include "memra/backend.h"
#include "dispatch/plugin_loader.h"

namespace memra::conformance {

// How the runner and the suite name the emulated-VNNI build, and its manifest name (the
// placeholder when no test build is found; every test build's label is its name with '-').
inline constexpr const char *kEmulatedLabel = "avxvnni-emulated";
inline constexpr const char *kEmulatedPluginName = "avxvnni_emulated";

struct BackendLocations {
    std::string library_backend_dir;  // <library dir>/memra-cpu-experts/backends
    std::string plugin_dir;           // MEMRA_CPU_EXPERT_PLUGIN_DIR, searched first ("" = unset)
    std::string test_backend_dir;     // where the emulated build lives ("" = none)
};

struct Backend {
    std::string label;         // "avx2", ..., "avxvnni-emulated", "amx-emulated"
    std::string plugin_name;   // the manifest's name: what Settings::backend selects
    bool test_build = false;   // an emulated build: not a shipped plugin
    std::string requires;      // the manifest's features, /proc/cpuinfo spelling
    std::string module;        // the module file
    std::string skip_reason;   // non-empty: not runnable here, and why (then nothing is set below)
    // Not runnable for another reason than a CPU feature this machine lacks (a bad manifest, a
    // module that does not load or is refused): a failure, never a skip.
    bool broken = false;
    const memra_backend_v2 *table = nullptr;
    // The core's selection with this backend forced (Settings{backend = plugin_name}), for full
    // token and rows calls through memra::moe_token / memra::expert_rows. Null with
    // registry_problem set when the core refuses a plugin its loader accepted (a failure).
    std::unique_ptr<BackendRegistry> registry;
    std::string registry_problem;

    bool runnable() const { return table != nullptr; }
};

class BackendSet {
public:
    // `disabled`: features to treat as absent (MEMRA_CPU_EXPERT_DISABLE_FEATURES), so a skip
    // can be tried on a CPU that has everything.
    BackendSet(const BackendLocations &where, const CpuFeatures &cpu, uint64_t disabled);

    // The scalar plugin, or nullptr with problem() saying why nothing can be checked.
    const Backend *reference() const { return reference_.runnable() ? &reference_ : nullptr; }
    const std::string &problem() const { return problem_; }

    // Every other plugin found (highest priority first), then the emulated build; runnable or
    // not.
    const std::vector<Backend> &subjects() const { return subjects_; }

    uint64_t usable_features() const { return usable_; }
    const std::vector<std::string> &searched() const { return searched_; }

private:
    Backend make_backend(const PluginRecord &record, bool test_build, const BackendLocations &where,
                         const CpuFeatures &cpu, uint64_t disabled) const;

    uint64_t usable_ = 0;
    std::vector<std::string> searched_;
    std::vector<PluginRecord> records_;  // keep every loaded module mapped
    Backend reference_;
    std::vector<Backend> subjects_;
    std::string problem_;
};

// The kernel of `qtype` in a table, or nullptr.
const memra_kernel_v2 *find_kernel(const memra_backend_v2 &table, int32_t qtype);

// `rows` rows of ggml-layout weights as kernel `k` reads them: repacked by its own repack when it
// has a layout of its own (memra/backend.h), else as they are. Every kernel is held to scalar on
// the same ggml bytes, whatever its layout.
std::vector<uint8_t> in_kernel_layout(const memra_kernel_v2 &k, const uint8_t *w, size_t row_bytes, int32_t rows,
                                      int32_t n);

// Whether a table serves the token path of any format. A SIMD build serves every format on both
// paths; a rows-only build (plugins/amx) serves the rows path of some, the rest falling to the
// plugins below it, so a format it lacks is no defect.
bool serves_token_path(const memra_backend_v2 &table);

}  // namespace memra::conformance
