// Decoders of the K-quants (spec §4.4-4.8), each formula in the spec's exact operation order
// (e.g. Q4_K: two separate products and a subtraction, never an FMA), bit-identical to ggml.
#include "common/block_fields.h"
#include "common/decode.h"

namespace memra::blocks {

// dl = d * float(sc_s); ml = dmin * float(m_s); y[i] = (dl * float(q_i)) - ml
void dequantize_row_q2_K(const uint8_t *row, int32_t n, float *out) {
    for (int32_t b = 0; b < n / q2_K::kElems; ++b, out += q2_K::kElems) {
        const uint8_t *blk = row + size_t(b) * q2_K::kBytes;
        const float d = q2_K::d(blk), dmin = q2_K::dmin(blk);
        for (int i = 0; i < q2_K::kElems; ++i) {
            const int s = i / 16;
            const float dl = d * float(q2_K::scale(blk, s));
            const float ml = dmin * float(q2_K::min(blk, s));
            out[i] = (dl * float(q2_K::quant(blk, i))) - ml;
        }
    }
}

// dl = d * float(sc_j); y[i] = dl * float(v_i)
void dequantize_row_q3_K(const uint8_t *row, int32_t n, float *out) {
    for (int32_t b = 0; b < n / q3_K::kElems; ++b, out += q3_K::kElems) {
        const uint8_t *blk = row + size_t(b) * q3_K::kBytes;
        const float d = q3_K::d(blk);
        for (int i = 0; i < q3_K::kElems; ++i) {
            const float dl = d * float(q3_K::scale(blk, i / 16));
            out[i] = dl * float(q3_K::quant(blk, i));
        }
    }
}

// Q4_K and Q5_K share the decode formula; only where the quant comes from differs.
// y[i] = ((d * float(sc_j)) * float(q_i)) - (dmin * float(m_j)), j = i / 32
template <typename Quant>
static void dequantize_k4(const uint8_t *blk, float d, float dmin, const uint8_t *scales,
                          Quant quant, float *out) {
    for (int i = 0; i < 256; ++i) {
        const int j = i / 32;
        out[i] = ((d * float(k4_scale(scales, j))) * float(quant(blk, i))) -
                 (dmin * float(k4_min(scales, j)));
    }
}

void dequantize_row_q4_K(const uint8_t *row, int32_t n, float *out) {
    for (int32_t b = 0; b < n / q4_K::kElems; ++b, out += q4_K::kElems) {
        const uint8_t *blk = row + size_t(b) * q4_K::kBytes;
        dequantize_k4(blk, q4_K::d(blk), q4_K::dmin(blk), blk + 4, q4_K::quant, out);
    }
}

void dequantize_row_q5_K(const uint8_t *row, int32_t n, float *out) {
    for (int32_t b = 0; b < n / q5_K::kElems; ++b, out += q5_K::kElems) {
        const uint8_t *blk = row + size_t(b) * q5_K::kBytes;
        dequantize_k4(blk, q5_K::d(blk), q5_K::dmin(blk), blk + 4, q5_K::quant, out);
    }
}

// y[i] = (d * float(scales[i/16])) * float(q_i)
void dequantize_row_q6_K(const uint8_t *row, int32_t n, float *out) {
    for (int32_t b = 0; b < n / q6_K::kElems; ++b, out += q6_K::kElems) {
        const uint8_t *blk = row + size_t(b) * q6_K::kBytes;
        const float d = q6_K::d(blk);
        for (int i = 0; i < q6_K::kElems; ++i)
            out[i] = (d * float(q6_K::scale(blk, i / 16))) * float(q6_K::quant(blk, i));
    }
}

}  // namespace memra::blocks
