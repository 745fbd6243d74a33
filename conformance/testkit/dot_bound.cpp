#include "dot_bound.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "formats.h"
#include "memra/cpu_experts.h"
#include "memra/qtypes.h"

namespace memra::testkit {
namespace {

// Where the fp16 d and dmin of a super-block with mins sit (spec §4.4, §4.6, §4.7); -1: no mins.
struct MinFields {
    int d = -1, dmin = -1;
};
MinFields min_fields(int32_t qtype) {
    switch (qtype) {
        case MEMRA_QTYPE_Q2_K: return {80, 82};
        case MEMRA_QTYPE_Q4_K:
        case MEMRA_QTYPE_Q5_K: return {0, 2};
        default: return {};
    }
}

// The row decoded with the fp16 field at `offset` of every block set to +0.
std::vector<float> decoded_without(int32_t qtype, const uint8_t *row, int32_t n, int offset) {
    const memra_qtype_info &info = expertkit::qtype_info(qtype);
    const size_t blocks = size_t(n / info.block_elems);
    std::vector<uint8_t> copy(row, row + blocks * size_t(info.block_bytes));
    for (size_t b = 0; b < blocks; ++b) std::memset(&copy[b * size_t(info.block_bytes) + size_t(offset)], 0, 2);
    return expertkit::dequantize(qtype, copy.data(), 1, n);
}

}  // namespace

double dot_order_bound(int32_t qtype, const uint8_t *row, const void *act_q, int32_t n) {
    const memra_qtype_info &info = expertkit::qtype_info(qtype);
    const std::vector<float> a =
        expertkit::dequantize_activation(info.act_format, static_cast<const uint8_t *>(act_q), n);
    const MinFields mins = min_fields(qtype);
    std::vector<std::vector<float>> parts;  // the weights' scale part and min part, or the weights
    if (mins.d < 0) {
        parts.push_back(expertkit::dequantize(qtype, row, 1, n));
    } else {
        parts.push_back(decoded_without(qtype, row, n, mins.dmin));
        parts.push_back(decoded_without(qtype, row, n, mins.d));
    }
    double T = 0;
    for (const std::vector<float> &w : parts)
        for (int32_t i = 0; i < n; ++i) T += std::fabs(double(w[size_t(i)]) * double(a[size_t(i)]));
    // Terms per row: one per 16 values at most (NVFP4's sub-blocks; a super-block with mins has 2
    // per 256), plus ggml's lane folds and a conversion.
    const double k = double(n) / 16 + 4, u = std::ldexp(1.0, -24);
    // The bound assumes no partial sum overflows, which needs T <= FLT_MAX: beyond, one order can
    // overflow where the other does not (ggml's lanes to +-inf and NaN where the block's exact sum
    // is finite), and no finite bound exists.
    if (!(T <= double(std::numeric_limits<float>::max()))) return std::numeric_limits<double>::infinity();
    return 1.01 * 2 * (k * u / (1 - k * u)) * T;
}

}  // namespace memra::testkit
