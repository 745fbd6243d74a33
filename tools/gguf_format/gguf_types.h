// The vocabulary of a GGUF file (ggml docs/gguf.md, version 3): metadata value types and the ggml
// tensor types with their block geometry. Tensor type ids are ggml's, the same as the library's
// qtype ids; the table below also knows ggml types the library does not evaluate, so that a reader
// can size (and skip) every tensor of a real file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace memra::gguf {

inline constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
inline constexpr uint32_t kVersion = 3;
inline constexpr uint32_t kDefaultAlignment = 32;
inline constexpr uint32_t kMaxDims = 4;  // GGML_MAX_DIMS

// gguf_type: the type tag of a metadata value (stored as u32).
enum class ValueType : uint32_t {
    UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6, BOOL = 7,
    STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};
inline constexpr uint32_t kValueTypeCount = 13;

// "uint32", "string", ... ; "type<N>" outside the list.
std::string value_type_name(uint32_t type);

// Bytes of one scalar value of this type; 0 for STRING and ARRAY (variable length) and unknown.
uint32_t value_type_size(uint32_t type);

// One ggml tensor type: values per block and bytes per block.
struct TensorTypeInfo {
    uint32_t id;
    const char *name;  // ggml's spelling: "q4_K", "iq3_s", ...
    uint32_t block_elems;
    uint32_t block_bytes;
};

// Every ggml type this reader can size; nullopt for an id it does not know.
std::optional<TensorTypeInfo> tensor_type_info(uint32_t id);

// The name of a tensor type, or "type<N>".
std::string tensor_type_name(uint32_t id);

// The id of a tensor type spelled as ggml does (case-insensitive: "Q4_K" or "q4_k").
std::optional<uint32_t> tensor_type_from_name(const std::string &name);

}  // namespace memra::gguf
