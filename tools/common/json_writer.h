// A minimal streaming JSON writer for the tools' --json output: objects, arrays, strings (escaped
// per RFC 8259), integers, doubles and booleans, with commas placed automatically.
#pragma once

#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

namespace memra::tools {

class JsonWriter {
public:
    explicit JsonWriter(std::ostream &out) : out_(out) {}

    JsonWriter &begin_object() { return open('{'); }
    JsonWriter &end_object() { return close('}'); }
    JsonWriter &begin_array() { return open('['); }
    JsonWriter &end_array() { return close(']'); }

    // The next value belongs to this key (inside an object).
    JsonWriter &key(const std::string &k) {
        separate();
        write_string(k);
        out_ << ':';
        after_key_ = true;
        return *this;
    }

    JsonWriter &value(const std::string &s) { separate(); write_string(s); return *this; }
    JsonWriter &value(const char *s) { return value(std::string(s)); }
    JsonWriter &value(bool b) { separate(); out_ << (b ? "true" : "false"); return *this; }
    JsonWriter &value(int64_t v) { separate(); out_ << v; return *this; }
    JsonWriter &value(double v) {
        separate();
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.9g", v);
        out_ << buf;
        return *this;
    }

    template <class T>
    JsonWriter &field(const std::string &k, const T &v) {
        key(k);
        return value(v);
    }

private:
    JsonWriter &open(char c) {
        separate();
        out_ << c;
        first_.push_back(true);
        return *this;
    }
    JsonWriter &close(char c) {
        out_ << c;
        first_.pop_back();
        return *this;
    }
    // A comma before every element but the first of its container; none right after a key.
    void separate() {
        if (after_key_) {
            after_key_ = false;
            return;
        }
        if (first_.empty()) return;
        if (!first_.back()) out_ << ',';
        first_.back() = false;
    }
    void write_string(const std::string &s) {
        out_ << '"';
        for (unsigned char c : s) {
            switch (c) {
            case '"': out_ << "\\\""; break;
            case '\\': out_ << "\\\\"; break;
            case '\n': out_ << "\\n"; break;
            case '\t': out_ << "\\t"; break;
            case '\r': out_ << "\\r"; break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out_ << buf;
                } else {
                    out_ << c;
                }
            }
        }
        out_ << '"';
    }

    std::ostream &out_;
    std::vector<bool> first_;
    bool after_key_ = false;
};

}  // namespace memra::tools
