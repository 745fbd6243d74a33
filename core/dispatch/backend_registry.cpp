#include "dispatch/backend_registry.h"

#include "dispatch/tuning.h"
#include "memra/qtypes.h"

namespace memra {

const char *path_name(KernelPath path) { return path == KernelPath::kGemv ? "token" : "rows"; }

void KernelTable::add(const memra_backend_v2 *t) {
    for (int32_t k = 0; k < t->kernel_count; ++k) {
        const memra_kernel_v2 &kernel = t->kernels[k];
        std::array<Slot, kKernelPaths> &paths = slots_[static_cast<size_t>(kernel.qtype)];
        const bool serves[kKernelPaths] = {kernel.gemv != nullptr, kernel.gemm != nullptr};
        for (int p = 0; p < kKernelPaths; ++p) {
            if (!serves[p]) continue;
            if (!paths[p].any.kernel) paths[p].any = {&kernel, t};
            if (!paths[p].ggml.kernel && kernel.layout == MEMRA_LAYOUT_GGML) paths[p].ggml = {&kernel, t};
        }
    }
    for (int f = 0; f < MEMRA_ACT_FORMAT_COUNT; ++f)
        if (!quantizers_[f] && t->quantize[f]) quantizers_[f] = t->quantize[f];
}

KernelChoice KernelTable::kernel_for(int32_t qtype, KernelPath path, bool any_layout) const {
    if (qtype < 0 || static_cast<size_t>(qtype) >= slots_.size()) return {};
    const Slot &slot = slots_[static_cast<size_t>(qtype)][static_cast<int>(path)];
    return any_layout ? slot.any : slot.ggml;
}

BackendRegistry::BackendRegistry(Settings settings, const CpuFeatures &cpu,
                                 std::string library_backend_dir)
    : settings_(std::move(settings)) {
    usable_features_ = cpu.usable & ~settings_.disabled_features;
    if (!settings_.problems.empty()) {
        unusable_reason_ = settings_.problems.front();
        return;
    }
    if (!settings_.plugin_dir.empty()) search_dirs_.push_back(settings_.plugin_dir);
    search_dirs_.push_back(std::move(library_backend_dir));
    plugins_ = load_plugins(search_dirs_, usable_features_);
    select();
}
void BackendRegistry::select() {
    auto searched = [this] {
        std::string s;
        for (const std::string &d : search_dirs_) s += (s.empty() ? "" : ", ") + d;
        return s;
    };
    // plugins_ is sorted by priority, best first.
    size_t first = plugins_.size();
    if (settings_.backend == "auto") {
        for (size_t i = 0; i < plugins_.size() && first == plugins_.size(); ++i)
            if (plugins_[i].loaded) first = i;
        if (first == plugins_.size()) {
            unusable_reason_ = "no usable backend plugin found (searched: " + searched() + ")";
            return;
        }
    } else {
        for (size_t i = 0; i < plugins_.size(); ++i)
            if (plugins_[i].manifest.name == settings_.backend) first = i;
        if (first == plugins_.size()) {
            // The names are the manifests' found: a build or package may install any set.
            std::string found;
            for (const PluginRecord &p : plugins_)
                if (!p.manifest.name.empty()) found += (found.empty() ? "" : ", ") + p.manifest.name;
            unusable_reason_ = "MEMRA_CPU_EXPERT_BACKEND=" + settings_.backend +
                               ": no such backend plugin is installed (searched: " + searched() +
                               "; found: auto" + (found.empty() ? "" : ", ") + found + ")";
            return;
        }
        if (!plugins_[first].loaded) {
            unusable_reason_ = "MEMRA_CPU_EXPERT_BACKEND=" + settings_.backend +
                               " cannot be used: " + plugins_[first].status;
            return;
        }
    }
    primary_ = plugins_[first].table;

    // The chosen plugin first, then every lower-priority usable one: a qtype, a path of a qtype
    // or an activation format the chosen plugin lacks is served by the best plugin below it, down
    // to scalar.
    for (size_t i = first; i < plugins_.size(); ++i)
        if (plugins_[i].loaded) kernels_.add(plugins_[i].table);
}

KernelChoice planned_kernel(const BackendRegistry &registry, int32_t qtype, KernelPath path, bool file_backed,
                            bool file_cache) {
    const KernelChoice ggml = registry.kernel_for(qtype, path);
    if (!file_backed || (!file_cache && ggml.kernel)) return ggml;
    return registry.kernel_for(qtype, path, /*any_layout=*/true);
}

const memra_kernel_v2 *prefetch_kernel(const BackendRegistry &registry, int32_t qtype) {
    return planned_kernel(registry, qtype, KernelPath::kGemv, /*file_backed=*/true, /*file_cache=*/true).kernel;
}

std::string BackendRegistry::served_by(int32_t qtype) const {
    std::string who[kKernelPaths];
    for (int p = 0; p < kKernelPaths; ++p) {
        const KernelPath path = static_cast<KernelPath>(p);
        const KernelChoice used = kernel_for(qtype, path), best = kernel_for(qtype, path, true);
        who[p] = used.backend ? used.backend->name : "none";
        // A plugin above serving this path only on weights it repacks: used for file-backed
        // weights the cache holds (planned_kernel), never for the caller's memory.
        if (best.backend && best.kernel != used.kernel)
            who[p] += std::string(" (") + best.backend->name + " for cached file weights)";
    }
    if (who[0] == who[1]) return who[0];
    return std::string(path_name(KernelPath::kGemv)) + " " + who[0] + ", " + path_name(KernelPath::kGemm) + " " + who[1];
}

std::string BackendRegistry::describe() const {
    std::string line = "memra-cpu-experts: ";
    if (!usable()) return line + "unusable: " + unusable_reason_;
    line += std::string("backend ") + primary_->name +
            (settings_.backend == "auto" ? " (auto)" : " (forced by MEMRA_CPU_EXPERT_BACKEND)");
    // Group the qtypes by the plugins that serve them, in the order of the qtype table.
    std::vector<std::pair<std::string, std::string>> groups;
    for (const memra_qtype_info &q : memra_qtype_table) {
        const std::string who = served_by(q.id);
        auto it = groups.begin();
        while (it != groups.end() && it->first != who) ++it;
        if (it == groups.end()) it = groups.insert(groups.end(), {who, ""});
        it->second += (it->second.empty() ? "" : ",") + std::string(q.name);
    }
    for (const auto &g : groups) line += "; " + g.second + ": " + g.first;
    line += std::string("; kernel tuning ") + kernel_tuning_name(process_kernel_tuning());
    line += "; plugins:";
    for (const PluginRecord &p : plugins_)
        line += " " + (p.manifest.name.empty() ? p.manifest.path : p.manifest.name) + " " +
                (p.loaded ? "ok" : "(" + p.status + ")");
    return line;
}

}  // namespace memra
