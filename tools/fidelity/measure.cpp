#include "measure.h"

#include <cmath>
#include <stdexcept>
#include <vector>

#include "common/act_layout.h"
#include "formats.h"

namespace memra::fidelity {
namespace {

// The values quantized activations stand for, exactly: d * q in double (a Q8_K d is a full f32,
// so the float product would round).
std::vector<double> exact_activation(int32_t act, const uint8_t *q, int32_t n) {
    std::vector<double> a(static_cast<size_t>(n));
    if (act == MEMRA_ACT_Q8_0) {
        for (int32_t b = 0; b < n / q8_0_act::kBlockElems; ++b) {
            const uint8_t *blk = q8_0_act::block(q, b);
            for (int i = 0; i < q8_0_act::kBlockElems; ++i)
                a[size_t(b * q8_0_act::kBlockElems + i)] = double(q8_0_act::d(blk)) * q8_0_act::qs(blk)[i];
        }
    } else if (act == MEMRA_ACT_Q8_K) {
        for (int32_t b = 0; b < n / q8_K_act::kBlockElems; ++b) {
            const uint8_t *blk = q8_K_act::block(q, b);
            for (int i = 0; i < q8_K_act::kBlockElems; ++i)
                a[size_t(b * q8_K_act::kBlockElems + i)] = double(q8_K_act::d(blk)) * q8_K_act::qs(blk)[i];
        }
    } else {
        const std::vector<float> f = expertkit::dequantize_activation(act, q, n);
        a.assign(f.begin(), f.end());
    }
    return a;
}

// |y - sum w a| / sum |w a|, the sums in long double (64-bit significands: the products of a
// float weight and an activation of at most 31 significant bits are exact).
double normalised_error(float y, const double *w, const double *a, int32_t n) {
    long double sum = 0, size = 0;
    for (int32_t i = 0; i < n; ++i) {
        const long double t = (long double)w[i] * a[i];
        sum += t;
        size += std::fabs(t);
    }
    return size == 0 ? std::fabs(double(y)) : double(std::fabs((long double)y - sum) / size);
}

void add(ErrorStats &s, double e, int32_t rows) {
    s.mean += e / rows;
    s.max = std::max(s.max, e);
}

}  // namespace

Fidelity measure(const memra_kernel_v2 &kernel, const Problem &p) {
    if (!kernel.gemv) throw std::invalid_argument("the kernel has no token path");
    const std::vector<uint8_t> xq = expertkit::quantize_activation(kernel.act_format, p.x.data(), p.n);
    const std::vector<double> a = exact_activation(kernel.act_format, xq.data(), p.n);
    const std::vector<double> x(p.x.begin(), p.x.end());
    const size_t row_bytes = expertkit::row_bytes(p.qtype, p.n);
    std::vector<uint8_t> packed;
    const uint8_t *w = p.weights.data();
    if (kernel.repack) {
        packed.resize(p.weights.size());
        kernel.repack(p.weights.data(), row_bytes, p.rows, p.n, packed.data());
        w = packed.data();
    }
    std::vector<float> y(static_cast<size_t>(p.rows));
    kernel.gemv(w, row_bytes, p.rows, p.n, xq.data(), y.data());
    Fidelity f;
    for (int32_t r = 0; r < p.rows; ++r) {
        const double *wr = &p.w[size_t(r) * size_t(p.n)];
        add(f.dot, normalised_error(y[size_t(r)], wr, a.data(), p.n), p.rows);
        add(f.end_to_end, normalised_error(y[size_t(r)], wr, x.data(), p.n), p.rows);
    }
    return f;
}

}  // namespace memra::fidelity
