#include "plugin_loader.h"

#include <dirent.h>

#include <algorithm>
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <set>
#include <string_view>

#include "memra/qtypes.h"

#ifndef MEMRA_BACKEND_SUBDIR
#error "MEMRA_BACKEND_SUBDIR must name the backend directory relative to the library"
#endif

namespace memra {
namespace {

// constexpr, not std::string: the registry is built from a load-time constructor, which may run
// before this file's dynamic initialisers would have.
constexpr std::string_view kManifestPrefix = "memra-backend-";
constexpr std::string_view kManifestSuffix = ".manifest";

std::vector<std::string> manifests_in(const std::string &dir) {
    std::vector<std::string> found;
    DIR *d = ::opendir(dir.c_str());
    if (!d) return found;
    while (const dirent *entry = ::readdir(d)) {
        const std::string name = entry->d_name;
        if (name.size() > kManifestPrefix.size() + kManifestSuffix.size() &&
            name.compare(0, kManifestPrefix.size(), kManifestPrefix) == 0 &&
            name.compare(name.size() - kManifestSuffix.size(), kManifestSuffix.size(),
                         kManifestSuffix) == 0)
            found.push_back(dir + "/" + name);
    }
    ::closedir(d);
    std::sort(found.begin(), found.end());
    return found;
}

// The table must describe the plugin the manifest promised, or the decision taken before
// loading meant nothing.
std::string verify_table(const memra_backend_v1 *t, const PluginManifest &m) {
    if (!t) return "entry point returned no table";
    if (t->interface_version != MEMRA_BACKEND_INTERFACE_VERSION)
        return "interface version " + std::to_string(t->interface_version) + ", core needs " +
               std::to_string(MEMRA_BACKEND_INTERFACE_VERSION);
    if (t->struct_size < sizeof(memra_backend_v1)) return "table is too small";
    if (!t->name || m.name != t->name) return "table name differs from manifest name";
    if (t->required_features != m.requires)
        return "table requires '" + cpu_feature_list(t->required_features) +
               "' but manifest says '" + cpu_feature_list(m.requires) + "'";
    if (t->kernel_count < 0 || (t->kernel_count > 0 && !t->kernels)) return "bad kernel list";
    std::set<int32_t> seen;
    for (int32_t i = 0; i < t->kernel_count; ++i) {
        const memra_kernel_v1 &k = t->kernels[i];
        const memra_qtype_info *q = memra_qtype_find(k.qtype);
        if (!q) return "kernel for unknown qtype " + std::to_string(k.qtype);
        if (!seen.insert(k.qtype).second) return std::string("two kernels for ") + q->name;
        if (k.act_format < 0 || k.act_format >= MEMRA_ACT_FORMAT_COUNT)
            return std::string("kernel for ") + q->name + " has a bad activation format";
        if (!k.gemv || !k.gemm || !k.dequantize_row)
            return std::string("kernel for ") + q->name + " lacks a function";
    }
    return {};
}

void load_one(PluginRecord &rec, uint64_t usable_features) {
    const PluginManifest &m = rec.manifest;
    if (!m.error.empty()) {
        rec.status = "bad manifest: " + m.error;
        return;
    }
    if (m.interface != MEMRA_BACKEND_INTERFACE_VERSION) {
        rec.status = "interface " + std::to_string(m.interface) + " (core speaks " +
                     std::to_string(MEMRA_BACKEND_INTERFACE_VERSION) + ")";
        return;
    }
    const uint64_t missing = m.requires & ~usable_features;
    if (missing) {
        rec.status = "cpu lacks " + cpu_feature_list(missing);
        return;
    }
    try {
        namespace dll = boost::dll;
        auto lib = std::make_shared<dll::shared_library>(
            m.module_path, dll::load_mode::rtld_now | dll::load_mode::rtld_local);
        if (!lib->has(MEMRA_BACKEND_ENTRY_SYMBOL)) {
            rec.status = std::string("module has no ") + MEMRA_BACKEND_ENTRY_SYMBOL;
            return;
        }
        auto &entry = lib->get<const memra_backend_v1 *()>(MEMRA_BACKEND_ENTRY_SYMBOL);
        const memra_backend_v1 *table = entry();
        const std::string why = verify_table(table, m);
        if (!why.empty()) {
            rec.status = "rejected: " + why;
            return;
        }
        rec.table = table;
        rec.library = std::move(lib);
        rec.loaded = true;
        rec.status = "ok";
    } catch (const std::exception &e) {
        rec.status = std::string("cannot load ") + m.module_path + ": " + e.what();
    }
}

}  // namespace

std::string default_backend_dir() {
    // The file this function was compiled into: the core shared library when the engine loads
    // us, the executable when a tool links the core statically.
    const boost::dll::fs::path self = boost::dll::this_line_location();
    return (self.parent_path() / MEMRA_BACKEND_SUBDIR).string();
}

std::vector<PluginRecord> load_plugins(const std::vector<std::string> &dirs, uint64_t usable_features) {
    std::vector<PluginRecord> plugins;
    std::set<std::string> names;
    for (const std::string &dir : dirs) {
        for (const std::string &path : manifests_in(dir)) {
            PluginRecord rec;
            rec.manifest = read_plugin_manifest(path);
            if (!rec.manifest.name.empty() && !names.insert(rec.manifest.name).second)
                continue;  // shadowed by the same name in an earlier directory
            load_one(rec, usable_features);
            plugins.push_back(std::move(rec));
        }
    }
    std::stable_sort(plugins.begin(), plugins.end(), [](const PluginRecord &a, const PluginRecord &b) {
        return a.manifest.priority > b.manifest.priority;
    });
    return plugins;
}

}  // namespace memra
