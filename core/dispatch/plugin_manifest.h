// The text file installed beside each backend plugin. The core reads it before it decides to
// dlopen the module: loading runs the module's initialisers, and a module compiled for an ISA
// this CPU lacks must never get that far.
//
//   # comment
//   name avx2
//   interface 2
//   priority 20
//   requires avx2 fma f16c
//   module memra-backend-avx2.so
#pragma once

#include <cstdint>
#include <string>

namespace memra {

struct PluginManifest {
    std::string path;         // the manifest file itself
    std::string name;
    uint32_t interface = 0;
    int priority = 0;          // higher wins under auto; fallback goes to lower ones
    uint64_t requires = 0;     // MEMRA_CPU_BIT mask
    std::string module;        // the module's file name in the manifest's directory
    std::string module_path;   // the manifest's directory + module, for messages
    std::string error;         // non-empty: the manifest is unusable, and why
};

// Parses the text of the manifest file `path` (the loader reads it through a descriptor it has
// checked, plugin_loader.cpp); problems end up in `error`, never thrown.
PluginManifest parse_plugin_manifest(const std::string &path, const std::string &text);

}  // namespace memra
