#include "backends.h"

#include <algorithm>

#include "dispatch/settings.h"

namespace memra::conformance {
namespace {

const char *const kReferenceName = "scalar";

}  // namespace

const memra_kernel_v2 *find_kernel(const memra_backend_v2 &table, int32_t qtype) {
    for (int32_t i = 0; i < table.kernel_count; ++i)
        if (table.kernels[i].qtype == qtype) return &table.kernels[i];
    return nullptr;
}

std::vector<uint8_t> in_kernel_layout(const memra_kernel_v2 &k, const uint8_t *w, size_t row_bytes, int32_t rows,
                                      int32_t n) {
    std::vector<uint8_t> out(w, w + row_bytes * size_t(rows));
    if (k.layout != MEMRA_LAYOUT_GGML) k.repack(w, row_bytes, rows, n, out.data());
    return out;
}

bool serves_token_path(const memra_backend_v2 &table) {
    for (int32_t i = 0; i < table.kernel_count; ++i)
        if (table.kernels[i].gemv) return true;
    return false;
}

BackendSet::BackendSet(const BackendLocations &where, const CpuFeatures &cpu, uint64_t disabled) {
    usable_ = cpu.usable & ~disabled;
    if (!where.plugin_dir.empty()) searched_.push_back(where.plugin_dir);
    searched_.push_back(where.library_backend_dir);
    records_ = load_plugins(searched_, usable_);
    const size_t shipped = records_.size();
    if (!where.test_backend_dir.empty()) {
        std::vector<PluginRecord> test = load_plugins({where.test_backend_dir}, usable_);
        for (PluginRecord &r : test) records_.push_back(std::move(r));
    }
    for (size_t i = 0; i < records_.size(); ++i) {
        Backend b = make_backend(records_[i], i >= shipped, where, cpu, disabled);
        if (b.plugin_name == kReferenceName && !b.test_build)
            reference_ = std::move(b);
        else
            subjects_.push_back(std::move(b));
    }
    const bool have_test_build = std::any_of(subjects_.begin(), subjects_.end(), [](const Backend &b) { return b.test_build; });
    if (!where.test_backend_dir.empty() && !have_test_build) {
        Backend missing;
        missing.label = kEmulatedLabel;
        missing.plugin_name = kEmulatedPluginName;
        missing.test_build = true;
        missing.skip_reason = "the test build is not in " + where.test_backend_dir +
                              " (it exists only in a build tree configured with MEMRA_BUILD_TESTS=ON)";
        subjects_.push_back(std::move(missing));
    }
    std::string dirs;
    for (const std::string &d : searched_) dirs += (dirs.empty() ? "" : ", ") + d;
    if (reference_.plugin_name.empty())
        problem_ = "no scalar plugin (the reference) found in " + dirs;
    else if (!reference_.runnable())
        problem_ = "the scalar plugin (the reference) cannot be used: " + reference_.skip_reason;
}

Backend BackendSet::make_backend(const PluginRecord &record, bool test_build,
                                 const BackendLocations &where, const CpuFeatures &cpu,
                                 uint64_t disabled) const {
    Backend b;
    b.plugin_name = record.manifest.name.empty() ? record.manifest.path : record.manifest.name;
    b.test_build = test_build;
    b.label = b.plugin_name;
    if (test_build) std::replace(b.label.begin(), b.label.end(), '_', '-');  // "avxvnni-emulated"
    b.requires = cpu_feature_list(record.manifest.requires);
    b.module = record.manifest.module_path;
    if (!record.loaded) {
        b.skip_reason = record.status;
        const uint64_t usable = cpu.usable & ~disabled;
        b.broken = !record.manifest.error.empty() || (record.manifest.requires & ~usable) == 0;
        return b;
    }
    // The same selection the library makes when MEMRA_CPU_EXPERT_BACKEND names this plugin.
    Settings settings;
    settings.backend = b.plugin_name;
    settings.plugin_dir = test_build ? where.test_backend_dir : where.plugin_dir;
    settings.disabled_features = disabled;
    b.table = record.table;
    b.registry = std::make_unique<BackendRegistry>(settings, cpu, where.library_backend_dir);
    if (!b.registry->usable()) {
        b.registry_problem = "the core cannot select it: " + b.registry->unusable_reason();
        b.registry.reset();
    }
    return b;
}

}  // namespace memra::conformance
