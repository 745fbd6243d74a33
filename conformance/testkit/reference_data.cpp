#include "reference_data.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace memra::testkit {

namespace {

std::vector<std::string> read_lines(const std::string &path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open reference file " + path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || line[0] == '#') continue;
        lines.push_back(line);
    }
    return lines;
}

[[noreturn]] void malformed(const std::string &path, const std::string &what) {
    throw std::runtime_error("malformed reference file " + path + ": " + what);
}

// "key rest" -> rest, checking the key.
std::string field(const std::string &path, const std::string &line, const std::string &key) {
    if (line.compare(0, key.size() + 1, key + " ") != 0) malformed(path, "expected '" + key + "', got '" + line + "'");
    return line.substr(key.size() + 1);
}

float parse_float(const std::string &path, const std::string &text) {
    errno = 0;
    char *end = nullptr;
    const float v = std::strtof(text.c_str(), &end);
    // ERANGE is expected for subnormals (strtof still returns the correctly rounded value).
    if (end == text.c_str() || *end != '\0') malformed(path, "bad float '" + text + "'");
    return v;
}

std::vector<float> f32_from_bytes(const std::vector<uint8_t> &bytes) {
    std::vector<float> v(bytes.size() / 4);
    std::memcpy(v.data(), bytes.data(), v.size() * 4);
    return v;
}

// "value 0xBITS" (dot_avx2 / dot_generic lines): the hex bits are authoritative.
uint32_t parse_result_bits(const std::string &path, const std::string &rest) {
    const size_t sp = rest.find(" 0x");
    if (sp == std::string::npos) malformed(path, "missing float32 hex bits in '" + rest + "'");
    return uint32_t(std::stoul(rest.substr(sp + 3), nullptr, 16));
}

}  // namespace

std::string reference_dir() { return MEMRA_REFERENCE_DIR; }

std::vector<uint8_t> hex_decode(std::string_view hex) {
    auto nibble = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        throw std::runtime_error(std::string("bad hex digit '") + c + "'");
    };
    if (hex.size() % 2) throw std::runtime_error("hex string of odd length");
    std::vector<uint8_t> out(hex.size() / 2);
    for (size_t i = 0; i < out.size(); ++i)
        out[i] = uint8_t(nibble(hex[2 * i]) << 4 | nibble(hex[2 * i + 1]));
    return out;
}

float DotTrial::dot_avx2() const {
    float f;
    std::memcpy(&f, &dot_avx2_bits, 4);
    return f;
}

float DotTrial::dot_generic() const {
    float f;
    std::memcpy(&f, &dot_generic_bits, 4);
    return f;
}

std::vector<ReferenceExample> load_examples(const std::string &type_name) {
    const std::string path = reference_dir() + "/examples/" + type_name + ".txt";
    const std::vector<std::string> lines = read_lines(path);
    std::vector<ReferenceExample> out;
    for (const std::string &line : lines) {
        if (line.compare(0, 8, "example ") == 0) {
            out.push_back({line.substr(8), {}, {}});
        } else if (out.empty()) {
            malformed(path, "data before the first 'example' line");
        } else if (line.compare(0, 10, "block_hex ") == 0) {
            out.back().bytes = hex_decode(line.substr(10));
        } else {
            out.back().values.push_back(parse_float(path, line));
        }
    }
    if (out.empty()) malformed(path, "no examples");
    return out;
}

std::vector<DotTrial> load_dot_trials(const std::string &type_name) {
    const std::string path = reference_dir() + "/examples/dot_" + type_name + ".txt";
    const std::vector<std::string> lines = read_lines(path);
    std::vector<DotTrial> out;
    size_t i = 0;
    while (i < lines.size()) {
        if (i + 7 > lines.size()) malformed(path, "truncated trial");
        DotTrial t;
        t.index = std::stoi(field(path, lines[i], "trial"));
        t.w = hex_decode(field(path, lines[i + 1], "w_hex"));
        t.act_f32 = f32_from_bytes(hex_decode(field(path, lines[i + 2], "act_f32_hex")));
        t.act_q = hex_decode(field(path, lines[i + 3], "act_q_hex"));
        t.dot_avx2_bits = parse_result_bits(path, field(path, lines[i + 4], "dot_avx2"));
        t.dot_generic_bits = parse_result_bits(path, field(path, lines[i + 5], "dot_generic"));
        t.dot_f64 = std::strtod(field(path, lines[i + 6], "dot_f64").c_str(), nullptr);
        out.push_back(std::move(t));
        i += 7;
    }
    if (out.empty()) malformed(path, "no trials");
    return out;
}

std::vector<std::vector<std::string>> load_table(const std::string &name) {
    const std::string path = reference_dir() + "/tables/" + name + ".txt";
    std::vector<std::vector<std::string>> out;
    for (const std::string &line : read_lines(path)) {
        std::istringstream ss(line);
        std::vector<std::string> row;
        for (std::string tok; ss >> tok;) row.push_back(tok);
        out.push_back(std::move(row));
    }
    return out;
}

}  // namespace memra::testkit
