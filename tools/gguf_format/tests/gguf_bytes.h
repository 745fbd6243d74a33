// Hand-built GGUF bytes for the reader tests: each field appended explicitly, so a test can
// corrupt exactly one of them.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace memra::gguf::test {

struct Bytes {
    std::vector<uint8_t> b;

    template <class T>
    Bytes &put(T v) {
        const size_t at = b.size();
        b.resize(at + sizeof v);
        std::memcpy(&b[at], &v, sizeof v);
        return *this;
    }
    Bytes &str(const std::string &s) {
        put<uint64_t>(s.size());
        b.insert(b.end(), s.begin(), s.end());
        return *this;
    }
    Bytes &header(uint64_t tensors, uint64_t kvs, uint32_t version = 3) {
        return put<uint32_t>(0x46554747).put<uint32_t>(version).put<uint64_t>(tensors).put<uint64_t>(kvs);
    }
    Bytes &kv_u32(const std::string &key, uint32_t v) { return str(key).put<uint32_t>(4).put<uint32_t>(v); }
    Bytes &kv_str(const std::string &key, const std::string &v) { return str(key).put<uint32_t>(8).str(v); }
    // A tensor info of one or more dimensions.
    Bytes &tensor(const std::string &name, uint32_t type, const std::vector<uint64_t> &dims, uint64_t offset) {
        str(name).put<uint32_t>(uint32_t(dims.size()));
        for (uint64_t d : dims) put<uint64_t>(d);
        return put<uint32_t>(type).put<uint64_t>(offset);
    }
    Bytes &pad_to(size_t alignment) {
        b.resize((b.size() + alignment - 1) / alignment * alignment, 0);
        return *this;
    }
    Bytes &zeros(size_t n) {
        b.resize(b.size() + n, 0);
        return *this;
    }
};

}  // namespace memra::gguf::test
