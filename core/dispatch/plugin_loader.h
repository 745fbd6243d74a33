// Finds backend plugins (MEMRA_CPU_EXPERT_PLUGIN_DIR first, then the directory at a fixed place
// beside this library), reads only manifests and modules that root or this process's effective
// user alone can have put there (trusted_file.h), decides from each manifest whether this CPU
// can run it, and only then loads exactly the module file it checked (fd_module.h) and checks
// its table against the manifest.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dispatch/cpu_features.h"
#include "memra/backend.h"
#include "dispatch/plugin_manifest.h"

namespace boost { namespace dll { class shared_library; } }

namespace memra {

struct PluginRecord {
    PluginManifest manifest;
    bool loaded = false;      // opened and its table verified
    std::string status;       // "ok", or why it was not loaded ("untrusted: ..." when refused)
    const memra_backend_v2 *table = nullptr;
    std::shared_ptr<boost::dll::shared_library> library;  // keeps the module mapped
};

// Where plugins live relative to the directory of the core library file: the same relative
// layout in the build tree and in any install prefix.
std::string default_backend_dir();

// Plugins found in `dirs` (earlier directories win for a name), each loaded if and only if its
// manifest is valid and `usable_features` covers what it requires. Never throws for a bad plugin:
// the reason lands in its status.
std::vector<PluginRecord> load_plugins(const std::vector<std::string> &dirs, uint64_t usable_features);

}  // namespace memra
