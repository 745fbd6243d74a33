#include "kernel_case.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "activations.h"
#include "backends.h"
#include "formats.h"
#include "memra/qtypes.h"
#include "synthetic_weights.h"

namespace memra::conformance {
namespace {

constexpr uint8_t kPoison = 0xCD;      // padding between activation rows, and outputs' canary
constexpr float kCanary = -7.25f;      // gemm output slots outside its rows keep this
constexpr size_t kStridePad = 40;      // xq_stride beyond the row: not a multiple of 16
constexpr size_t kLdyPad = 3;          // ldy beyond out: misaligns every row but the first
constexpr size_t kCacheLine = 64;

uint32_t bits_of(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

std::string hex(uint32_t u) {
    std::ostringstream s;
    s << "0x" << std::hex << u;
    return s.str();
}

}  // namespace

std::string KernelShape::name() const {
    return "in" + std::to_string(in) + "_out" + std::to_string(out) + "_m" + std::to_string(acts);
}

// Bit for bit, except that any NaN equals any NaN: which NaN a sum of NaN and inf operands
// yields (its sign and payload) depends on operand order, which IEEE 754 leaves open and SIMD
// lanes change; that the result is NaN at all is what the non-finite activation rows check.
std::string first_difference(const float *got, const float *want, size_t count) {
    for (size_t i = 0; i < count; ++i)
        if (bits_of(got[i]) != bits_of(want[i]) && !(std::isnan(got[i]) && std::isnan(want[i]))) {
            std::ostringstream s;
            s.precision(9);
            s << "at " << i << ": got " << got[i] << " (" << hex(bits_of(got[i])) << "), want "
              << want[i] << " (" << hex(bits_of(want[i])) << ")";
            return s.str();
        }
    return "";
}

KernelCase::KernelCase(const memra_backend_v2 &scalar, int32_t qtype, const KernelShape &shape,
                       uint64_t seed)
    : qtype_(qtype), shape_(shape) {
    const memra_qtype_info &info = expertkit::qtype_info(qtype);
    const memra_kernel_v2 *sk = find_kernel(scalar, qtype);
    act_format_ = info.act_format;
    std::mt19937_64 rng(seed);
    row_bytes_ = expertkit::row_bytes(qtype, shape.in);
    weights_ = expertkit::random_weights(qtype, shape.out, shape.in, rng);
    act_bytes_ = memra_act_row_bytes(act_format_, shape.in);
    act_stride_ = act_bytes_ + kStridePad;
    x_ = activation_rows(shape.acts, shape.in, rng);
    xq_.assign(act_stride_ * size_t(shape.acts), kPoison);
    ref_.resize(size_t(shape.out) * size_t(shape.acts));
    for (int32_t j = 0; j < shape.acts; ++j) {
        uint8_t *q = &xq_[size_t(j) * act_stride_];
        scalar.quantize[act_format_](&x_[size_t(j) * size_t(shape.in)], shape.in, q);
        sk->gemv(weights_.data(), row_bytes_, shape.out, shape.in, q, &ref_[size_t(j) * size_t(shape.out)]);
    }
    deq_first_.resize(size_t(shape.in));
    deq_last_.resize(size_t(shape.in));
    sk->dequantize_row(weights_.data(), shape.in, deq_first_.data());
    sk->dequantize_row(weights_.data() + size_t(shape.out - 1) * row_bytes_, shape.in, deq_last_.data());
}

std::string KernelCase::compare(const memra_backend_v2 &subject) const {
    const memra_kernel_v2 *k = find_kernel(subject, qtype_);
    if (!k) return "";  // the core serves this format from a lower plugin: nothing of its own
    if (k->act_format != act_format_)
        return std::string("kernel consumes ") + memra_act_format_name(k->act_format) +
               " activations, the format pairs with " + memra_act_format_name(act_format_);
    for (const std::string &why : {compare_quantizer(subject), compare_gemv(*k), compare_gemm(*k),
                                   compare_dequantize(*k)})
        if (!why.empty()) return why;
    return "";
}

std::string KernelCase::compare_quantizer(const memra_backend_v2 &subject) const {
    const auto quantize = subject.quantize[act_format_];
    if (!quantize) return "";  // the core then uses another plugin's (canonical) quantizer
    std::vector<uint8_t> q(act_bytes_);
    for (int32_t j = 0; j < shape_.acts; ++j) {
        quantize(&x_[size_t(j) * size_t(shape_.in)], shape_.in, q.data());
        const uint8_t *want = &xq_[size_t(j) * act_stride_];
        const auto diff = std::mismatch(q.begin(), q.end(), want);
        if (diff.first != q.end())
            return std::string("quantize ") + memra_act_format_name(act_format_) + ", activation " +
                   std::to_string(j) + ": byte " + std::to_string(diff.first - q.begin()) + " differs";
    }
    return "";
}

std::string KernelCase::compare_gemv(const memra_kernel_v2 &k) const {
    if (!k.gemv) return "";  // the token path is a lower plugin's (a rows-only build)
    const size_t out = size_t(shape_.out);
    const std::vector<uint8_t> w = in_kernel_layout(k, weights_.data(), row_bytes_, shape_.out, shape_.in);
    std::vector<float> y(out);
    // At the vector's own address, and at a copy that starts on a cache line (a kernel may read
    // rows that start on lines otherwise: simd/formats_float.h, gemv_on_lines).
    std::vector<uint8_t> lines(w.size() + kCacheLine);
    uint8_t *on_line = lines.data() + (kCacheLine - reinterpret_cast<uintptr_t>(lines.data()) % kCacheLine);
    std::memcpy(on_line, w.data(), w.size());
    for (const uint8_t *base : {w.data(), static_cast<const uint8_t *>(on_line)})
        for (int32_t j = 0; j < shape_.acts; ++j) {
            const uint8_t *q = &xq_[size_t(j) * act_stride_];
            const float *want = &ref_[size_t(j) * out];
            k.gemv(base, row_bytes_, shape_.out, shape_.in, q, y.data());
            const std::string diff = first_difference(y.data(), want, out);
            if (!diff.empty())
                return std::string(base == on_line ? "gemv on cache lines" : "gemv") + ", activation " +
                       std::to_string(j) + ", row " + diff;
        }
    // The core hands kernels tiles that start at any row (of a repacked matrix: at any multiple
    // of the row group): rows g.. of a copy at an odd address.
    const size_t g = size_t(k.row_group);
    if (out > g) {
        std::vector<uint8_t> shifted(w.size() + 1);
        std::memcpy(shifted.data() + 1, w.data(), w.size());
        k.gemv(shifted.data() + 1 + g * row_bytes_, row_bytes_, shape_.out - int32_t(g), shape_.in, xq_.data(), y.data());
        const std::string diff = first_difference(y.data(), &ref_[g], out - g);
        if (!diff.empty()) return "gemv from row " + std::to_string(g) + " at an odd address, row " + std::to_string(g) + " + " + diff;
    }
    return "";
}

std::string KernelCase::compare_gemm(const memra_kernel_v2 &k) const {
    if (!k.gemm) return "";  // the rows path is a lower plugin's
    const size_t out = size_t(shape_.out), ldy = out + kLdyPad;
    const std::vector<uint8_t> w = in_kernel_layout(k, weights_.data(), row_bytes_, shape_.out, shape_.in);
    for (int32_t m : {1, 2, 5, 64}) {
        if (m > shape_.acts) break;
        std::vector<float> y(ldy * size_t(m), kCanary);
        k.gemm(w.data(), row_bytes_, shape_.out, shape_.in, xq_.data(), act_stride_, m, y.data(), ldy);
        for (int32_t j = 0; j < m; ++j) {
            const float *got = &y[size_t(j) * ldy];
            const std::string diff = first_difference(got, &ref_[size_t(j) * out], out);
            if (!diff.empty())
                return "gemm m=" + std::to_string(m) + ", activation " + std::to_string(j) + ", row " + diff;
            for (size_t r = out; r < ldy; ++r)
                if (bits_of(got[r]) != bits_of(kCanary))
                    return "gemm m=" + std::to_string(m) + " wrote past its rows (activation " +
                           std::to_string(j) + ", slot " + std::to_string(r) + ")";
        }
    }
    return "";
}

std::string KernelCase::compare_dequantize(const memra_kernel_v2 &k) const {
    if (!k.dequantize_row) return "";  // optional for a layout of the plugin's own
    std::vector<float> d(size_t(shape_.in));
    k.dequantize_row(weights_.data(), shape_.in, d.data());
    std::string diff = first_difference(d.data(), deq_first_.data(), d.size());
    if (!diff.empty()) return "dequantize_row of row 0, value " + diff;
    k.dequantize_row(weights_.data() + size_t(shape_.out - 1) * row_bytes_, shape_.in, d.data());
    diff = first_difference(d.data(), deq_last_.data(), d.size());
    if (!diff.empty()) return "dequantize_row of the last row, value " + diff;
    return "";
}

}  // namespace memra::conformance
