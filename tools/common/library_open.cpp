#include "library_open.h"

#include <dlfcn.h>

#include <filesystem>

namespace memra::tools {

std::string OpenedLibrary::directory() const { return std::filesystem::path(path).parent_path().string(); }

bool open_library(const std::string &requested, OpenedLibrary &lib, std::string &error) {
    void *handle = dlopen(requested.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *why = dlerror();
        error = why ? why : "cannot load " + requested;
        return false;
    }
    // dladdr on one of its own symbols names the file the symbol came from.
    void *symbol = dlsym(handle, "memra_cpu_experts_abi_version");
    Dl_info info{};
    if (!symbol || !dladdr(symbol, &info) || !info.dli_fname) {
        error = requested + " is not a memra-cpu-experts library";
        return false;
    }
    lib.handle = handle;
    lib.path = info.dli_fname;
    return true;
}

}  // namespace memra::tools
