// Readers for the ggml reference data in conformance/reference (examples/ and tables/), the
// independent truth that the decoder, quantizer and dot-product tests compare against.
// Every reader throws std::runtime_error with the file name on a missing or malformed file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace memra::testkit {

// The conformance/reference directory (compile definition MEMRA_REFERENCE_DIR).
std::string reference_dir();

// "a1b2..." -> bytes; throws on odd length or a non-hex digit.
std::vector<uint8_t> hex_decode(std::string_view hex);

// One block example of examples/<type>.txt: 'example NAME', 'block_hex HEX', then one %.9g
// value per element. The %.9g text round-trips float32 exactly, so values[i] carries ggml's
// float bit pattern (including -0).
struct ReferenceExample {
    std::string name;  // "quantized" or "random_bits"
    std::vector<uint8_t> bytes;
    std::vector<float> values;
};
std::vector<ReferenceExample> load_examples(const std::string &type_name);  // "q4_K", "bf16", ...

// One trial of examples/dot_<type>.txt (n = 512).
struct DotTrial {
    int index = 0;
    std::vector<uint8_t> w;       // weight row
    std::vector<float> act_f32;   // activation row as f32
    std::vector<uint8_t> act_q;   // that row after ggml's CPU activation quantizer
    uint32_t dot_avx2_bits = 0;   // ggml_vec_dot result, AVX2 kernel (float32 bits)
    uint32_t dot_generic_bits = 0;  // ggml's portable scalar kernel (float32 bits)
    double dot_f64 = 0;           // sum of dequant(w) * dequant(act_q) in double
    float dot_avx2() const;
    float dot_generic() const;
};
std::vector<DotTrial> load_dot_trials(const std::string &type_name);  // "q4_K", ...

// The data lines of tables/<name>.txt (comments dropped), split at whitespace.
std::vector<std::vector<std::string>> load_table(const std::string &name);

}  // namespace memra::testkit
