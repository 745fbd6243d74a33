// Where the tools find libmemra-cpu-experts.so.2 when --lib does not say.
#pragma once

#include <string>

namespace memra::tools {

// MEMRA_CPU_EXPERT_LIB if set; else the library beside this executable's tree (build tree
// bin/../lib, then the install tree's bindir -> libdir); else the bare soname, for the dynamic
// linker's own search.
std::string default_library_path();

}  // namespace memra::tools
