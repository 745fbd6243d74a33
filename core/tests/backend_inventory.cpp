#include "backend_inventory.h"

#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "memra_backend_rows.h"

namespace memra::tests {

const std::vector<std::string> &backend_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> shipped;
        for (const memra_backend_row &row : memra_backend_rows)
            if (row.shipped()) shipped.push_back(row.name);
        return shipped;
    }();
    return names;
}

std::vector<InstalledBackend> installed_backends(const std::string &dir) {
    std::vector<InstalledBackend> out;
    for (const auto &entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() != ".manifest") continue;
        InstalledBackend b;
        std::ifstream in(entry.path());
        for (std::string line; std::getline(in, line);) {
            std::istringstream words(line);
            std::string key;
            words >> key;
            if (key == "name") words >> b.name;
            if (key == "priority") words >> b.priority;
            if (key == "module") words >> b.module;
            if (key == "requires")
                for (std::string f; words >> f;) b.requires_features.push_back(f);
        }
        out.push_back(b);
    }
    return out;
}

std::set<std::string> cpu_flags() {
    std::ifstream in("/proc/cpuinfo");
    std::set<std::string> flags;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("flags", 0) != 0) continue;
        std::istringstream words(line.substr(line.find(':') + 1));
        for (std::string f; words >> f;) flags.insert(f);
        break;
    }
    // MEMRA_TEST_HIDE_CPU_FEATURES="avx2 ..." plays a smaller CPU, as in plugins/tests (pair it
    // with MEMRA_CPU_EXPERT_DISABLE_FEATURES so that the library plays the same one).
    if (const char *hide = std::getenv("MEMRA_TEST_HIDE_CPU_FEATURES")) {
        std::istringstream words(hide);
        for (std::string w; words >> w;) flags.erase(w);
    }
    return flags;
}

std::vector<std::string> missing_features(const InstalledBackend &b) {
    const std::set<std::string> have = cpu_flags();
    std::vector<std::string> missing;
    for (const std::string &f : b.requires_features)
        if (!have.count(f)) missing.push_back(f);
    return missing;
}

std::string best_usable_backend(const std::string &dir) {
    const InstalledBackend *best = nullptr;
    const std::vector<InstalledBackend> all = installed_backends(dir);
    for (const InstalledBackend &b : all)
        if (missing_features(b).empty() && (!best || b.priority > best->priority)) best = &b;
    return best ? best->name : "";
}

const InstalledBackend *find_backend(const std::vector<InstalledBackend> &all, const std::string &name) {
    for (const InstalledBackend &b : all)
        if (b.name == name) return &b;
    return nullptr;
}

}  // namespace memra::tests
