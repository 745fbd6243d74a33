// memra_quantize: encoders from f32 to each of the library's weight formats, the inverse of
// the decoders in plugins/scalar (the formats spec, ../shared/formats/README.md §4). They are what
// `memra-gguf synth` writes; tests/ checks each against the scalar decoder (round trip).
//
// The K-quant and i-quant encoders search their sub-block scales with a simple grid search plus a
// least-squares refit (scale_search.h), not ggml's exact make_qkx2 / importance-weighted search:
// the bytes differ from llama-quantize's, the accuracy is comparable (bounds in the tests).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace memra::quantize {

// Whether qtype (a ggml type id) has an encoder here: every format of the list (memra/qtypes.h).
bool has_encoder(int32_t qtype);

// Bytes of one row of n values (n a multiple of qtype's block size).
size_t row_bytes(int32_t qtype, int64_t n);

// x[0..n) -> one row of qtype blocks at out (row_bytes(qtype, n) bytes). Throws
// std::invalid_argument for an unknown qtype or an n that is not whole blocks.
void quantize_row(int32_t qtype, const float *x, int64_t n, uint8_t *out);

// rows consecutive rows of n values each.
std::vector<uint8_t> quantize_rows(int32_t qtype, const float *x, int64_t rows, int64_t n);

}  // namespace memra::quantize
