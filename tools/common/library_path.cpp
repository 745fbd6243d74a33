#include "library_path.h"

#include <cstdlib>
#include <filesystem>

namespace memra::tools {
namespace {

std::filesystem::path executable_dir() {
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::filesystem::path() : exe.parent_path();
}

}  // namespace

std::string default_library_path() {
    if (const char *env = std::getenv("MEMRA_CPU_EXPERT_LIB"); env && *env) return env;
    const std::filesystem::path dir = executable_dir();
    if (!dir.empty()) {
        for (const char *rel : {MEMRA_TOOLS_BUILD_REL, MEMRA_TOOLS_INSTALL_REL}) {
            const std::filesystem::path candidate = dir / rel / MEMRA_TOOLS_LIB_NAME;
            if (std::filesystem::exists(candidate)) return candidate.lexically_normal().string();
        }
    }
    return MEMRA_TOOLS_LIB_NAME;
}

}  // namespace memra::tools
