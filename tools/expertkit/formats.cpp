#include "formats.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "common/act_layout.h"
#include "common/fp_convert.h"
#include "scalar/scalar_backend.h"

namespace memra::expertkit {

std::vector<int32_t> all_qtypes() {
    std::vector<int32_t> ids;
    for (const memra_qtype_info &info : memra_qtype_table) ids.push_back(info.id);
    return ids;
}

std::string qtype_name(int32_t qtype) {
    const memra_qtype_info *info = memra_qtype_find(qtype);
    return info ? std::string(info->name) : "qtype" + std::to_string(qtype);
}

const memra_qtype_info &qtype_info(int32_t qtype) {
    const memra_qtype_info *info = memra_qtype_find(qtype);
    if (!info) throw std::invalid_argument("not an ABI v2 qtype: " + std::to_string(qtype));
    return *info;
}

size_t row_bytes(int32_t qtype, int32_t in_features) {
    const memra_qtype_info &info = qtype_info(qtype);
    return size_t(in_features / info.block_elems) * size_t(info.block_bytes);
}

const memra_kernel_v2 &scalar_kernel(int32_t qtype) {
    const memra_backend_v2 *backend = memra_scalar_backend();
    for (int32_t k = 0; k < backend->kernel_count; ++k)
        if (backend->kernels[k].qtype == qtype) return backend->kernels[k];
    throw std::invalid_argument("the scalar backend has no kernel for " + qtype_name(qtype));
}

std::vector<float> dequantize(int32_t qtype, const uint8_t *w, int32_t rows, int32_t n) {
    const memra_kernel_v2 &kernel = scalar_kernel(qtype);
    const size_t stride = row_bytes(qtype, n);
    std::vector<float> out(size_t(rows) * size_t(n));
    for (int32_t r = 0; r < rows; ++r)
        kernel.dequantize_row(w + size_t(r) * stride, n, out.data() + size_t(r) * size_t(n));
    return out;
}

std::vector<uint8_t> quantize_activation(int32_t act, const float *x, int32_t n) {
    std::vector<uint8_t> out(memra_act_row_bytes(act, n));
    auto quantize = memra_scalar_backend()->quantize[act];
    if (!quantize) throw std::invalid_argument("the scalar backend has no quantizer for this format");
    quantize(x, n, out.data());
    return out;
}

std::vector<float> dequantize_activation(int32_t act, const uint8_t *q, int32_t n) {
    std::vector<float> out(static_cast<size_t>(n));
    switch (act) {
    case MEMRA_ACT_F32:
        std::memcpy(out.data(), q, out.size() * sizeof(float));
        break;
    case MEMRA_ACT_BF16:
        for (int32_t i = 0; i < n; ++i) out[size_t(i)] = bf16_to_f32(load_u16(q + 2 * size_t(i)));
        break;
    case MEMRA_ACT_Q8_0:
        for (int32_t b = 0; b < n / q8_0_act::kBlockElems; ++b) {
            const uint8_t *blk = q8_0_act::block(q, b);
            for (int i = 0; i < q8_0_act::kBlockElems; ++i)
                out[size_t(b * q8_0_act::kBlockElems + i)] = float(q8_0_act::qs(blk)[i]) * q8_0_act::d(blk);
        }
        break;
    case MEMRA_ACT_Q8_K:
        for (int32_t b = 0; b < n / q8_K_act::kBlockElems; ++b) {
            const uint8_t *blk = q8_K_act::block(q, b);
            for (int i = 0; i < q8_K_act::kBlockElems; ++i)
                out[size_t(b * q8_K_act::kBlockElems + i)] = q8_K_act::d(blk) * float(q8_K_act::qs(blk)[i]);
        }
        break;
    default:
        throw std::invalid_argument("unknown activation format " + std::to_string(act));
    }
    return out;
}

std::vector<float> roundtrip_activation(int32_t act, const float *x, int32_t n) {
    const std::vector<uint8_t> q = quantize_activation(act, x, n);
    return dequantize_activation(act, q.data(), n);
}

RoundingGrid rounding_grid(int32_t act, const double *x, int32_t n) {
    RoundingGrid grid{std::vector<double>(size_t(n), 0.0), std::vector<double>(size_t(n), 0.0)};
    if (act == MEMRA_ACT_Q8_0 || act == MEMRA_ACT_Q8_K) {
        // Both quantizers map the block's largest magnitude to ±127 and round x * 127 / amax.
        const int32_t block = memra_act_block_elems(act);
        for (int32_t b = 0; b < n; b += block) {
            double amax = 0;
            for (int32_t i = b; i < b + block; ++i) amax = std::max(amax, std::fabs(x[i]));
            if (amax == 0) continue;
            for (int32_t i = b; i < b + block; ++i) {
                grid.step[size_t(i)] = amax / 127.0;
                grid.pos[size_t(i)] = x[i] * 127.0 / amax;
            }
        }
    } else if (act == MEMRA_ACT_BF16) {
        // bf16 keeps 8 significant bits: |x| in [2^(e-1), 2^e) is rounded to multiples of 2^(e-8).
        for (int32_t i = 0; i < n; ++i) {
            if (x[i] == 0) continue;
            int e = 0;
            std::frexp(x[i], &e);
            grid.step[size_t(i)] = std::ldexp(1.0, e - 8);
            grid.pos[size_t(i)] = x[i] / grid.step[size_t(i)];
        }
    }
    return grid;  // F32: nothing is rounded (the float conversion itself is below every tolerance)
}

}  // namespace memra::expertkit
