#include "json_reader.h"

#include <cstdlib>
#include <cstring>

namespace memra::bench::json {
namespace {

class Parser {
public:
    explicit Parser(const std::string &text) : s_(text) {}

    Value document() {
        Value v = value();
        skip_space();
        if (pos_ != s_.size()) fail("trailing characters");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string &why) const {
        throw std::runtime_error("JSON: " + why + " at byte " + std::to_string(pos_));
    }
    void skip_space() {
        while (pos_ < s_.size() && std::strchr(" \t\r\n", s_[pos_]) && s_[pos_] != '\0') ++pos_;
    }
    char peek() {
        skip_space();
        if (pos_ >= s_.size()) fail("unexpected end");
        return s_[pos_];
    }
    void expect(char c) {
        if (peek() != c) fail(std::string("expected '") + c + "'");
        ++pos_;
    }
    bool consume_word(const char *w) {
        const size_t n = std::strlen(w);
        if (s_.compare(pos_, n, w) != 0) return false;
        pos_ += n;
        return true;
    }

    Value value() {
        Value v;
        const char c = peek();
        if (c == '{') return object();
        if (c == '[') return array();
        if (c == '"') {
            v.type = Value::Type::String;
            v.string = string();
        } else if (consume_word("true")) {
            v.type = Value::Type::Bool;
            v.boolean = true;
        } else if (consume_word("false")) {
            v.type = Value::Type::Bool;
        } else if (consume_word("null")) {
            v.type = Value::Type::Null;
        } else {
            v.type = Value::Type::Number;
            v.number = number();
        }
        return v;
    }

    Value object() {
        Value v;
        v.type = Value::Type::Object;
        expect('{');
        if (peek() == '}') {
            ++pos_;
            return v;
        }
        for (;;) {
            if (peek() != '"') fail("expected a key");
            std::string k = string();
            expect(':');
            v.object[k] = value();
            if (peek() == ',') {
                ++pos_;
                continue;
            }
            expect('}');
            return v;
        }
    }

    Value array() {
        Value v;
        v.type = Value::Type::Array;
        expect('[');
        if (peek() == ']') {
            ++pos_;
            return v;
        }
        for (;;) {
            v.array.push_back(value());
            if (peek() == ',') {
                ++pos_;
                continue;
            }
            expect(']');
            return v;
        }
    }

    double number() {
        // strtod accepts more than JSON (hex, inf, leading '+'); check the JSON grammar's first
        // character and let strtod do the rest.
        const char c = s_[pos_];
        if (!(c == '-' || (c >= '0' && c <= '9'))) fail("unexpected character");
        const char *begin = s_.c_str() + pos_;
        char *end = nullptr;
        const double d = std::strtod(begin, &end);
        if (end == begin) fail("bad number");
        pos_ += size_t(end - begin);
        return d;
    }

    std::string string() {
        expect('"');
        std::string out;
        for (;;) {
            if (pos_ >= s_.size()) fail("unterminated string");
            const char c = s_[pos_++];
            if (c == '"') return out;
            if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (pos_ >= s_.size()) fail("unterminated escape");
            const char e = s_[pos_++];
            switch (e) {
            case '"': out += '"'; break;
            case '\\': out += '\\'; break;
            case '/': out += '/'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'u': out += utf8(hex4()); break;
            default: fail("bad escape");
            }
        }
    }

    unsigned hex4() {
        if (pos_ + 4 > s_.size()) fail("short \\u escape");
        unsigned v = 0;
        for (int i = 0; i < 4; ++i) {
            const char c = s_[pos_++];
            v <<= 4;
            if (c >= '0' && c <= '9') v |= unsigned(c - '0');
            else if (c >= 'a' && c <= 'f') v |= unsigned(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') v |= unsigned(c - 'A' + 10);
            else fail("bad \\u escape");
        }
        return v;
    }

    static std::string utf8(unsigned cp) {
        std::string out;
        if (cp < 0x80) {
            out += char(cp);
        } else if (cp < 0x800) {
            out += char(0xC0 | (cp >> 6));
            out += char(0x80 | (cp & 0x3F));
        } else {
            out += char(0xE0 | (cp >> 12));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        }
        return out;
    }

    const std::string &s_;
    size_t pos_ = 0;
};

}  // namespace

const Value &Value::at(const std::string &k) const {
    if (type != Type::Object) throw std::runtime_error("JSON: '" + k + "' looked up in a non-object");
    const auto it = object.find(k);
    if (it == object.end()) throw std::runtime_error("JSON: missing key '" + k + "'");
    return it->second;
}

const char *type_name(Value::Type t) {
    switch (t) {
    case Value::Type::Null: return "null";
    case Value::Type::Bool: return "boolean";
    case Value::Type::Number: return "number";
    case Value::Type::String: return "string";
    case Value::Type::Array: return "array";
    case Value::Type::Object: return "object";
    }
    return "?";
}

Value parse(const std::string &text) { return Parser(text).document(); }

}  // namespace memra::bench::json
