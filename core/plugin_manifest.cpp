#include "plugin_manifest.h"

#include <fstream>
#include <sstream>

#include "cpu_features.h"

namespace memra {

PluginManifest read_plugin_manifest(const std::string &path) {
    PluginManifest m;
    m.path = path;
    std::ifstream in(path);
    if (!in) {
        m.error = "cannot read manifest " + path;
        return m;
    }
    const std::string dir = path.substr(0, path.find_last_of('/') + 1);
    std::string line, module;
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
            fields >> module;
        } else {
            bad("unknown key '" + key + "'");
        }
    }
    if (m.error.empty()) {
        if (m.name.empty())
            m.error = path + ": no name";
        else if (!have_interface || !have_priority || !have_requires || module.empty())
            m.error = path + ": needs interface, priority, requires and module";
        else if (module.find('/') != std::string::npos)
            m.error = path + ": module must be a file name beside the manifest";
    }
    m.module_path = dir + module;
    return m;
}

}  // namespace memra
