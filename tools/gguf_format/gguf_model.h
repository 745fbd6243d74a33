// A parsed GGUF file: header, metadata key/values and tensor infos, with every offset checked
// against the file's size. parse() is the one entry point for untrusted bytes (a fuzzer's target):
// it never reads outside [data, data + size) and reports any malformation as a ParseError naming
// the byte offset and the field.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gguf_types.h"

namespace memra::gguf {

class ParseError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A metadata value. Arrays keep their element type, their length and only their first
// kArrayHead elements (tokenizer arrays hold 150k strings; a summary is all a tool shows).
struct Value {
    static constexpr size_t kArrayHead = 8;

    ValueType type = ValueType::UINT8;
    uint64_t u = 0;   // UINT*, BOOL
    int64_t i = 0;    // INT*
    double f = 0;     // FLOAT*
    std::string s;    // STRING
    ValueType elem_type = ValueType::UINT8;  // ARRAY
    uint64_t count = 0;                      // ARRAY: number of elements
    std::vector<Value> head;                 // ARRAY: the first min(count, kArrayHead)

    // The value as an unsigned integer, when it is a non-negative integer of any width.
    std::optional<uint64_t> as_uint() const;
    // One line for people: `42`, `"qwen3moe"`, `[string x 151936: "a", "b", ...]`.
    std::string summary() const;
};

struct KeyValue {
    std::string key;
    Value value;
};

struct TensorInfo {
    std::string name;
    uint32_t type = 0;
    std::vector<uint64_t> dims;  // ggml order: dims[0] (ne[0]) is the row length
    uint64_t offset = 0;         // relative to the start of the data section
    std::optional<uint64_t> bytes;  // nullopt when the type is unknown to this reader

    uint64_t elements() const;
    uint64_t rows() const { return elements() / dims.at(0); }  // product of dims[1..]
};

struct Model {
    uint32_t version = 0;
    uint64_t alignment = kDefaultAlignment;
    uint64_t data_offset = 0;  // absolute file offset of the data section
    uint64_t file_size = 0;
    std::vector<KeyValue> kvs;
    std::vector<TensorInfo> tensors;

    const Value *find_value(const std::string &key) const;
    const TensorInfo *find_tensor(const std::string &name) const;
    // general.architecture, or "" when absent or not a string.
    std::string architecture() const;
};

// Parses the whole file image [data, data + size). Throws ParseError.
Model parse(const uint8_t *data, size_t size);

}  // namespace memra::gguf
