// Opening libmemra-cpu-experts.so.2 the way the engine does, and finding out which file the
// dynamic linker actually loaded (a bare soname resolves through its search path), so that a
// tool can name that file and look beside it for the plugins.
#pragma once

#include <string>

namespace memra::tools {

struct OpenedLibrary {
    void *handle = nullptr;  // from dlopen(RTLD_NOW | RTLD_LOCAL); never closed
    std::string path;        // the file loaded
    std::string directory() const;
};

// false, with `error` saying why, when `requested` cannot be loaded or is not a memra-cpu-experts
// library (it lacks memra_cpu_experts_abi_version).
bool open_library(const std::string &requested, OpenedLibrary &lib, std::string &error);

}  // namespace memra::tools
