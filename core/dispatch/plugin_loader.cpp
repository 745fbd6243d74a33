#include "dispatch/plugin_loader.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <set>
#include <string_view>

#include "dispatch/fd_module.h"
#include "memra/qtypes.h"
#include "dispatch/trusted_file.h"
#include "dispatch/tuning.h"

#ifndef MEMRA_BACKEND_SUBDIR
#error "MEMRA_BACKEND_SUBDIR must name the backend directory relative to the library"
#endif

namespace memra {
namespace {

// constexpr, not std::string: the registry is built from a load-time constructor, which may run
// before this file's dynamic initialisers would have.
constexpr std::string_view kManifestPrefix = "memra-backend-";
constexpr std::string_view kManifestSuffix = ".manifest";

// The manifest file names of the directory open as `dir_fd`: listed through that descriptor (a
// duplicate, which fdopendir takes over), so the directory listed is the one judged.
std::vector<std::string> manifests_in(int dir_fd) {
    std::vector<std::string> found;
    DIR *d = ::fdopendir(::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0));
    if (!d) return found;
    while (const dirent *entry = ::readdir(d)) {
        const std::string name = entry->d_name;
        if (name.size() > kManifestPrefix.size() + kManifestSuffix.size() &&
            name.compare(0, kManifestPrefix.size(), kManifestPrefix) == 0 &&
            name.compare(name.size() - kManifestSuffix.size(), kManifestSuffix.size(),
                         kManifestSuffix) == 0)
            found.push_back(name);
    }
    ::closedir(d);
    std::sort(found.begin(), found.end());
    return found;
}

// A manifest is a few lines: anything beyond this is not one.
constexpr size_t kMaxManifestBytes = 64 * 1024;

bool read_text(int fd, std::string &text) {
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) != 0;) {
        if (n < 0 || text.size() + size_t(n) > kMaxManifestBytes) return false;
        text.append(buf, size_t(n));
    }
    return true;
}

// The plugin of manifest file `file` in the directory open as `dir_fd` (`dir` names it; `refused`
// says why the directory itself is not trusted, if so): its manifest read and, when it can be
// loaded, its module opened into `module`, both checked (trusted_file.h). A refusal or an
// unreadable manifest lands in the record's status.
PluginRecord inspect_plugin(int dir_fd, const std::string &dir, const std::string &refused,
                            const std::string &file, UniqueFd &module) {
    PluginRecord rec;
    rec.manifest.path = dir + "/" + file;
    // A manifest that is not read goes by its file's name: it still shadows the plugin of that
    // name further down the search path, and a forced backend of that name fails saying why.
    rec.manifest.name = file.substr(kManifestPrefix.size(), file.size() - kManifestPrefix.size() - kManifestSuffix.size());
    rec.status = refused;
    if (!rec.status.empty()) return rec;
    const UniqueFd manifest = open_trusted_file(dir_fd, dir, file, rec.status);
    if (!manifest) return rec;
    std::string text;
    if (!read_text(manifest.get(), text)) {
        rec.status = "cannot read " + rec.manifest.path + " (or it is larger than a manifest can be)";
        return rec;
    }
    rec.manifest = parse_plugin_manifest(rec.manifest.path, text);
    if (!rec.manifest.error.empty())
        rec.status = "bad manifest: " + rec.manifest.error;
    else
        module = open_trusted_file(dir_fd, dir, rec.manifest.module, rec.status);
    return rec;
}

// The table must describe the plugin the manifest promised, or the decision taken before
// loading meant nothing.
std::string verify_table(const memra_backend_v2 *t, const PluginManifest &m) {
    if (!t) return "entry point returned no table";
    if (t->interface_version != MEMRA_BACKEND_INTERFACE_VERSION)
        return "interface version " + std::to_string(t->interface_version) + ", core needs " +
               std::to_string(MEMRA_BACKEND_INTERFACE_VERSION);
    if (t->struct_size < MEMRA_BACKEND_V2_MIN_SIZE) return "table is too small";
    if (!t->name || m.name != t->name) return "table name differs from manifest name";
    if (t->required_features != m.requires)
        return "table requires '" + cpu_feature_list(t->required_features) +
               "' but manifest says '" + cpu_feature_list(m.requires) + "'";
    if (t->kernel_count < 0 || (t->kernel_count > 0 && !t->kernels)) return "bad kernel list";
    std::set<int32_t> seen;
    for (int32_t i = 0; i < t->kernel_count; ++i) {
        const memra_kernel_v2 &k = t->kernels[i];
        const memra_qtype_info *q = memra_qtype_find(k.qtype);
        if (!q) return "kernel for unknown qtype " + std::to_string(k.qtype);
        if (!seen.insert(k.qtype).second) return std::string("two kernels for ") + q->name;
        const std::string kernel = std::string("kernel for ") + q->name;
        if (k.act_format < 0 || k.act_format >= MEMRA_ACT_FORMAT_COUNT) return kernel + " has a bad activation format";
        if (!k.gemv && !k.gemm) return kernel + " serves neither path (gemv and gemm are NULL)";
        if (k.layout == MEMRA_LAYOUT_GGML) {
            if (!k.dequantize_row) return kernel + " lacks dequantize_row";
            if (k.row_group != 1 || k.repack) return kernel + " in ggml's layout has a row group or a repack";
        } else {
            if (!k.repack) return kernel + " in layout " + std::to_string(k.layout) + " lacks repack";
            if (k.row_group < 1 || k.row_group > 64) return kernel + " has a bad row group";
        }
    }
    return {};
}

// Passes the process's kernel tuning to a verified table that takes one (a table built before
// memra_backend_v2::tune existed ends before the field: struct_size says so).
void tune_plugin(const memra_backend_v2 &t) {
    if (t.struct_size >= offsetof(memra_backend_v2, tune) + sizeof(t.tune) && t.tune) t.tune(process_kernel_tuning());
}

// `module`: the module file, open and checked by inspect_plugin.
void load_one(PluginRecord &rec, uint64_t usable_features, UniqueFd module) {
    const PluginManifest &m = rec.manifest;
    if (m.interface != MEMRA_BACKEND_INTERFACE_VERSION) {
        rec.status = "interface " + std::to_string(m.interface) + " (core speaks " +
                     std::to_string(MEMRA_BACKEND_INTERFACE_VERSION) + ")";
        return;
    }
    const uint64_t missing = m.requires & ~usable_features;
    if (missing) {
        rec.status = "cpu lacks " + cpu_feature_list(missing) + cpu_absence_note(missing);
        return;
    }
    std::string error;
    std::shared_ptr<boost::dll::shared_library> lib = load_module(std::move(module), error);
    if (!lib) {
        rec.status = "cannot load " + m.module_path + ": " + error;
        return;
    }
    try {
        if (!lib->has(MEMRA_BACKEND_ENTRY_SYMBOL)) {
            rec.status = std::string("module has no ") + MEMRA_BACKEND_ENTRY_SYMBOL;
            return;
        }
        auto &entry = lib->get<const memra_backend_v2 *()>(MEMRA_BACKEND_ENTRY_SYMBOL);
        const memra_backend_v2 *table = entry();
        const std::string why = verify_table(table, m);
        if (!why.empty()) {
            rec.status = "rejected: " + why;
            return;
        }
        tune_plugin(*table);
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
        std::string refused;
        const UniqueFd dir_fd = open_plugin_dir(dir, refused);
        if (!dir_fd) continue;  // absent: nothing to find there
        for (const std::string &file : manifests_in(dir_fd.get())) {
            UniqueFd module;
            PluginRecord rec = inspect_plugin(dir_fd.get(), dir, refused, file, module);
            if (!rec.manifest.name.empty() && !names.insert(rec.manifest.name).second)
                continue;  // shadowed by the same name in an earlier directory
            if (rec.status.empty()) load_one(rec, usable_features, std::move(module));
            plugins.push_back(std::move(rec));
        }
    }
    std::stable_sort(plugins.begin(), plugins.end(), [](const PluginRecord &a, const PluginRecord &b) {
        return a.manifest.priority > b.manifest.priority;
    });
    return plugins;
}

}  // namespace memra
