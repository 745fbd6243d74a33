// The tools' JSON, written and read with nlohmann-json (Debian's nlohmann-json3-dev). Documents
// are ordered_json, so that keys come out in the order they were set: the order docs/ lists them
// and the conformance tests match. Dumped compact, on one line; text that is not valid UTF-8 (a
// path, a CPU's model name) is replaced, never thrown at the end of a long run.
#pragma once

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

namespace memra::tools {

using Json = nlohmann::ordered_json;

// One line of compact JSON, without the newline.
inline std::string dump_json(const Json &j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// The JSON kind of a value as the documents' schemas name it ("number" for any number).
inline const char *json_kind(const Json &j) {
    if (j.is_number()) return "number";
    if (j.is_boolean()) return "boolean";
    return j.type_name();  // null, string, array, object
}

// Member k of object v, which must be of `kind`; throws std::runtime_error naming k otherwise.
inline const Json &json_member(const Json &v, const std::string &k, const char *kind) {
    if (!v.is_object()) throw std::runtime_error("JSON: '" + k + "' looked up in a " + json_kind(v));
    const auto it = v.find(k);
    if (it == v.end()) throw std::runtime_error("JSON: missing key '" + k + "'");
    if (std::string(json_kind(*it)) != kind)
        throw std::runtime_error("JSON: '" + k + "' is a " + json_kind(*it) + ", expected a " + kind);
    return *it;
}
inline double json_number(const Json &v, const std::string &k) { return json_member(v, k, "number").get<double>(); }
inline std::string json_string(const Json &v, const std::string &k) { return json_member(v, k, "string").get<std::string>(); }
inline bool json_bool(const Json &v, const std::string &k) { return json_member(v, k, "boolean").get<bool>(); }

}  // namespace memra::tools
