#include "json_compare.h"

#include <algorithm>
#include <cmath>

namespace memra::tools {
namespace {

std::string compare(const Json &e, const Json &a, JsonMatch how, const std::string &path);

std::string compare_objects(const Json &e, const Json &a, JsonMatch how, const std::string &path) {
    auto ei = e.begin(), ai = a.begin();
    for (; ei != e.end() && ai != a.end(); ++ei, ++ai) {
        if (ei.key() != ai.key()) return path + ": key '" + ai.key() + "' where '" + ei.key() + "' was";
        const std::string d = compare(ei.value(), ai.value(), how, path + "." + ei.key());
        if (!d.empty()) return d;
    }
    if (ei != e.end()) return path + ": missing key '" + ei.key() + "'";
    if (ai != a.end()) return path + ": extra key '" + ai.key() + "'";
    return "";
}

// Whether every element of `of` is shaped like some element of `like`.
std::string shaped_like(const Json &of, const Json &like, const std::string &path, const char *side) {
    for (size_t i = 0; i < of.size(); ++i) {
        std::string first;
        const bool any = std::any_of(like.begin(), like.end(), [&](const Json &l) {
            const std::string d = compare(l, of[i], JsonMatch::Shape, path + "[" + std::to_string(i) + "]");
            if (first.empty()) first = d;
            return d.empty();
        });
        if (!any) return first + " (" + side + ")";
    }
    return "";
}

std::string compare_arrays(const Json &e, const Json &a, JsonMatch how, const std::string &path) {
    if (how == JsonMatch::Shape) {
        if (e.empty() || a.empty()) return "";
        const std::string d = shaped_like(a, e, path, "element of the new document");
        return d.empty() ? shaped_like(e, a, path, "element of the old document") : d;
    }
    if (e.size() != a.size())
        return path + ": " + std::to_string(a.size()) + " elements where " + std::to_string(e.size()) + " were";
    for (size_t i = 0; i < e.size(); ++i) {
        const std::string d = compare(e[i], a[i], how, path + "[" + std::to_string(i) + "]");
        if (!d.empty()) return d;
    }
    return "";
}

std::string compare(const Json &e, const Json &a, JsonMatch how, const std::string &path) {
    if (std::string(json_kind(e)) != json_kind(a))
        return path + ": a " + json_kind(a) + " where a " + json_kind(e) + " was";
    if (e.is_object()) return compare_objects(e, a, how, path);
    if (e.is_array()) return compare_arrays(e, a, how, path);
    if (how == JsonMatch::Shape || e.is_null()) return "";
    if (e.is_number()) {
        const double x = e.get<double>(), y = a.get<double>();
        return std::fabs(x - y) <= 1e-8 * std::max(std::fabs(x), std::fabs(y)) ? ""
                                                                               : path + ": " + a.dump() + " where " + e.dump() + " was";
    }
    return e == a ? "" : path + ": " + a.dump() + " where " + e.dump() + " was";
}

}  // namespace

std::string json_difference(const Json &expected, const Json &actual, JsonMatch how) {
    return compare(expected, actual, how, "$");
}

}  // namespace memra::tools
