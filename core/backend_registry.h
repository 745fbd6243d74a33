// The process-wide choice of backends: which plugin serves each qtype, which quantizer produces
// each activation format, and, when nothing can run, why. Built once at load from the settings,
// the CPU features and the plugins found; immutable afterwards, so every call reads it without
// locking.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "cpu_features.h"
#include "memra/backend.h"
#include "plugin_loader.h"
#include "settings.h"

namespace memra {

using QuantizeFn = void (*)(const float *x, int32_t n, void *out);

struct KernelChoice {
    const memra_kernel_v1 *kernel = nullptr;
    const memra_backend_v1 *backend = nullptr;
};

class BackendRegistry {
public:
    // `library_backend_dir`: the directory beside the core library (default_backend_dir() for
    // the library itself; a tool inspecting an installed library passes that library's).
    BackendRegistry(Settings settings, const CpuFeatures &cpu, std::string library_backend_dir);

    bool usable() const { return unusable_reason_.empty(); }
    const std::string &unusable_reason() const { return unusable_reason_; }

    // nullptr kernel: no selected plugin serves this (valid) qtype.
    KernelChoice kernel_for(int32_t qtype) const;
    QuantizeFn quantizer_for(int32_t act_format) const { return quantizers_[act_format]; }

    const memra_backend_v1 *primary() const { return primary_; }
    const std::vector<PluginRecord> &plugins() const { return plugins_; }
    const std::vector<std::string> &search_dirs() const { return search_dirs_; }
    const Settings &settings() const { return settings_; }
    uint64_t usable_features() const { return usable_features_; }

    // One line: the backend, how it was chosen, which plugin serves which qtypes, and each
    // plugin found with its state; or why the library cannot compute.
    std::string describe() const;

private:
    void select();

    Settings settings_;
    uint64_t usable_features_ = 0;
    std::vector<std::string> search_dirs_;
    std::vector<PluginRecord> plugins_;
    const memra_backend_v1 *primary_ = nullptr;
    std::array<KernelChoice, 64> kernels_{};  // indexed by ggml type id (all ids < 64)
    std::array<QuantizeFn, MEMRA_ACT_FORMAT_COUNT> quantizers_{};
    std::string unusable_reason_;
};

}  // namespace memra
