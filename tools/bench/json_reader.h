// A small typed JSON reader (RFC 8259 values; \u escapes of the Basic Multilingual Plane), the
// counterpart of tools/common/json_writer.h. memra-bench's parent process reads its children's
// result lines with it, and the output checker of the tests reads the --json file with it, so
// that types (a number is not a string) can be checked without a JSON library.
#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace memra::bench::json {

struct Value {
    enum class Type { Null, Bool, Number, String, Array, Object };
    Type type = Type::Null;
    bool boolean = false;
    double number = 0;
    std::string string;
    std::vector<Value> array;
    std::map<std::string, Value> object;

    bool is(Type t) const { return type == t; }
    // The member k of an object; throws std::runtime_error naming k when absent or not an object.
    const Value &at(const std::string &k) const;
    bool has(const std::string &k) const { return type == Type::Object && object.count(k) != 0; }
};

const char *type_name(Value::Type t);

// Parses one complete JSON text; throws std::runtime_error with the byte offset on bad input.
Value parse(const std::string &text);

}  // namespace memra::bench::json
