#include "dispatch/plugin_manifest.h"

#include <sstream>

#include "dispatch/cpu_features.h"

namespace memra {
namespace {

// The module must be a file of the manifest's own directory, the one whose owner and mode were
// checked: no '/' (no other directory), no leading '.' (neither "." nor ".." nor a hidden
// file), portable characters only, and a shared object's ".so".
bool is_module_name(const std::string &s) {
    if (s.size() < 4 || s[0] == '.' || s.compare(s.size() - 3, 3, ".so") != 0) return false;
    for (char c : s)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-' || c == '+'))
            return false;
    return true;
}

}  // namespace

PluginManifest parse_plugin_manifest(const std::string &path, const std::string &text) {
    PluginManifest m;
    m.path = path;
    std::istringstream in(text);
    const std::string dir = path.substr(0, path.find_last_of('/') + 1);
    std::string line;
    bool have_interface = false, have_priority = false, have_requires = false;
    int line_no = 0;
    while (std::getline(in, line)) {
        ++line_no;
        std::istringstream fields(line);
        std::string key;
        if (!(fields >> key) || key[0] == '#') continue;
        auto bad = [&](const std::string &why) {
            if (m.error.empty()) m.error = path + ":" + std::to_string(line_no) + ": " + why;
        };
        if (key == "name") {
            fields >> m.name;
        } else if (key == "interface") {
            have_interface = static_cast<bool>(fields >> m.interface);
            if (!have_interface) bad("interface is not a number");
        } else if (key == "priority") {
            have_priority = static_cast<bool>(fields >> m.priority);
            if (!have_priority) bad("priority is not a number");
        } else if (key == "requires") {
            have_requires = true;
            std::string feature;
            while (fields >> feature) {
                int f = cpu_feature_from_name(feature);
                // An unknown requirement may be an ISA newer than this core: refusing the
                // plugin is the only safe reading.
                if (f < 0)
                    bad("requires unknown CPU feature '" + feature + "'");
                else
                    m.requires |= MEMRA_CPU_BIT(f);
            }
        } else if (key == "module") {
            fields >> m.module;
        } else {
            bad("unknown key '" + key + "'");
        }
    }
    if (m.error.empty()) {
        if (m.name.empty())
            m.error = path + ": no name";
        else if (!have_interface || !have_priority || !have_requires || m.module.empty())
            m.error = path + ": needs interface, priority, requires and module";
        else if (!is_module_name(m.module))
            m.error = path + ": module '" + m.module +
                      "' is not a file name beside the manifest (letters, digits, '.', '_', '-', '+', "
                      "not starting with '.', ending in .so)";
    }
    m.module_path = dir + m.module;
    return m;
}

}  // namespace memra
