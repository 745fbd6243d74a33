#include "served_by.h"

#include <sstream>

#include "memra/qtypes.h"

namespace memra::demo {
namespace {

bool is_format(const std::string &name) {
    for (const memra_qtype_info &q : memra_qtype_table)
        if (name == q.name) return true;
    return false;
}

}  // namespace

std::map<std::string, std::string> served_by(const std::string &describe_line) {
    std::map<std::string, std::string> out;
    size_t start = 0;
    while (start < describe_line.size()) {
        size_t end = describe_line.find("; ", start);
        if (end == std::string::npos) end = describe_line.size();
        const std::string group = describe_line.substr(start, end - start);
        start = end + 2;
        const size_t colon = group.find(": ");
        if (colon == std::string::npos) continue;
        const std::string plugin = group.substr(colon + 2);
        std::map<std::string, std::string> these;
        std::stringstream names(group.substr(0, colon));
        bool all_formats = true;
        for (std::string name; std::getline(names, name, ',');) {
            all_formats = all_formats && is_format(name);
            these[name] = plugin;
        }
        if (all_formats) out.insert(these.begin(), these.end());  // "plugins: ..." and the like are not
    }
    return out;
}

}  // namespace memra::demo
