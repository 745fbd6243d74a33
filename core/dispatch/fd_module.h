// Maps a plugin module with Boost.DLL from a descriptor the loader opened and checked
// (trusted_file.h), through /proc/self/fd/N: the dynamic loader maps exactly that file, not
// whatever its path names by the time it looks, and never searches its library path.
// docs/security.md says why this and not a check after dlopen.
#pragma once

#include <memory>
#include <string>

#include "dispatch/trusted_file.h"

namespace boost { namespace dll { class shared_library; } }

namespace memra {

// The module open as `file`, loaded RTLD_NOW | RTLD_LOCAL; nullptr and `error` when it cannot be.
std::shared_ptr<boost::dll::shared_library> load_module(UniqueFd file, std::string &error);

}  // namespace memra
