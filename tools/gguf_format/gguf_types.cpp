#include "gguf_types.h"

#include <algorithm>
#include <cctype>
#include <iterator>

namespace memra::gguf {
namespace {

// ggml's type_traits (ggml.c): block geometry of every type a GGUF file may hold. Ids 4, 5
// (Q4_2, Q4_3) and 31..33 (Q4_0_4_4 ...) are retired and never appear in current files.
constexpr TensorTypeInfo kTensorTypes[] = {
    {0, "f32", 1, 4},         {1, "f16", 1, 2},         {2, "q4_0", 32, 18},
    {3, "q4_1", 32, 20},      {6, "q5_0", 32, 22},      {7, "q5_1", 32, 24},
    {8, "q8_0", 32, 34},      {9, "q8_1", 32, 36},      {10, "q2_K", 256, 84},
    {11, "q3_K", 256, 110},   {12, "q4_K", 256, 144},   {13, "q5_K", 256, 176},
    {14, "q6_K", 256, 210},   {15, "q8_K", 256, 292},   {16, "iq2_xxs", 256, 66},
    {17, "iq2_xs", 256, 74},  {18, "iq3_xxs", 256, 98}, {19, "iq1_s", 256, 50},
    {20, "iq4_nl", 32, 18},   {21, "iq3_s", 256, 110},  {22, "iq2_s", 256, 82},
    {23, "iq4_xs", 256, 136}, {24, "i8", 1, 1},         {25, "i16", 1, 2},
    {26, "i32", 1, 4},        {27, "i64", 1, 8},        {28, "f64", 1, 8},
    {29, "iq1_m", 256, 56},   {30, "bf16", 1, 2},       {34, "tq1_0", 256, 54},
    {35, "tq2_0", 256, 66},   {39, "mxfp4", 32, 17},    {40, "nvfp4", 64, 36},
};

constexpr const char *kValueTypeNames[kValueTypeCount] = {
    "uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
    "bool",  "string", "array", "uint64", "int64", "float64"};

constexpr uint32_t kValueTypeSizes[kValueTypeCount] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

}  // namespace

std::string value_type_name(uint32_t type) {
    return type < kValueTypeCount ? kValueTypeNames[type] : "type" + std::to_string(type);
}

uint32_t value_type_size(uint32_t type) { return type < kValueTypeCount ? kValueTypeSizes[type] : 0; }

std::optional<TensorTypeInfo> tensor_type_info(uint32_t id) {
    for (const TensorTypeInfo &t : kTensorTypes)
        if (t.id == id) return t;
    return std::nullopt;
}

std::string tensor_type_name(uint32_t id) {
    const auto info = tensor_type_info(id);
    return info ? info->name : "type" + std::to_string(id);
}

std::optional<uint32_t> tensor_type_from_name(const std::string &name) {
    const std::string wanted = lower(name);
    for (const TensorTypeInfo &t : kTensorTypes)
        if (lower(t.name) == wanted) return t.id;
    return std::nullopt;
}

}  // namespace memra::gguf
