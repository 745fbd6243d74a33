// One format on one matrix shape at the kernel level: the scalar plugin's answers are computed
// once, then any backend's kernel is held to them bit for bit. Every format is bit-exact by
// design (memra/backend.h): the activations are quantized by one canonical quantizer, and each
// SIMD kernel sums in the scalar kernel's order, F32 and BF16 included, so there is no tolerance
// here at all.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memra/backend.h"

namespace memra::conformance {

struct KernelShape {
    int32_t in = 0;    // in_features (the row length, the reduction)
    int32_t out = 0;   // rows of the matrix under test
    int32_t acts = 0;  // activation rows: gemv on each, gemm with m = 1, 2, 5, 64 up to this
    std::string name() const;  // "in4096_out40_m5"
};

class KernelCase {
public:
    // Builds random weights and activations from `seed` and the scalar answers.
    KernelCase(const memra_backend_v2 &scalar, int32_t qtype, const KernelShape &shape, uint64_t seed);

    // "" when `subject` agrees bit for bit; else the first disagreement, said in one line. What
    // is compared: the subject's own activation quantizer (when it has one) byte for byte; gemv
    // on the whole matrix and on rows 1.. (row_group..) from a misaligned copy; gemm for every m
    // with padded strides, and that it writes nothing outside its rows; dequantize_row of the
    // first and last rows. A kernel with a layout of its own gets the same weights through its
    // repack (in_kernel_layout, backends.h).
    std::string compare(const memra_backend_v2 &subject) const;

private:
    std::string compare_quantizer(const memra_backend_v2 &subject) const;
    std::string compare_gemv(const memra_kernel_v2 &k) const;
    std::string compare_gemm(const memra_kernel_v2 &k) const;
    std::string compare_dequantize(const memra_kernel_v2 &k) const;

    int32_t qtype_ = 0, act_format_ = 0;
    KernelShape shape_;
    size_t row_bytes_ = 0, act_bytes_ = 0, act_stride_ = 0;
    std::vector<uint8_t> weights_;
    std::vector<float> x_;        // acts x in, the activations before quantization
    std::vector<uint8_t> xq_;     // acts quantized rows, act_stride_ apart (padding poisoned)
    std::vector<float> ref_;      // ref_[j * out + r]: scalar gemv of row r with activation j
    std::vector<float> deq_first_, deq_last_;
};

// The first element whose bits differ, as "at 12: got 0.5 (0x3f000000), want ..."; "" if none.
std::string first_difference(const float *got, const float *want, size_t count);

}  // namespace memra::conformance
