// Decoders of the code-book formats IQ3_S and IQ4_XS (spec §4.10, §4.12), bit-identical to ggml.
#include "common/block_fields.h"
#include "common/decode.h"

namespace memra::blocks {

// db = d * float(ls); y[i] = (db * float(mag_i)) * (sign ? -1 : +1). The sign is a final exact
// multiplication, so d = 0 with a set sign bit gives -0.0, as in ggml.
void dequantize_row_iq3_s(const uint8_t *row, int32_t n, float *out) {
    for (int32_t b = 0; b < n / iq3_s::kElems; ++b, out += iq3_s::kElems) {
        const uint8_t *blk = row + size_t(b) * iq3_s::kBytes;
        const float d = iq3_s::d(blk);
        for (int i = 0; i < iq3_s::kElems; ++i) {
            const float db = d * float(iq3_s::scale(blk, i / 32));
            out[i] = (db * float(iq3_s::magnitude(blk, i))) * (iq3_s::negative(blk, i) ? -1.0f : 1.0f);
        }
    }
}

// dl = d * float(ls - 32); y[i] = dl * float(K[code_i])
void dequantize_row_iq4_xs(const uint8_t *row, int32_t n, float *out) {
    for (int32_t b = 0; b < n / iq4_xs::kElems; ++b, out += iq4_xs::kElems) {
        const uint8_t *blk = row + size_t(b) * iq4_xs::kBytes;
        const float d = iq4_xs::d(blk);
        for (int i = 0; i < iq4_xs::kElems; ++i) {
            const float dl = d * float(iq4_xs::scale(blk, i / 32));
            out[i] = dl * float(iq4_xs::value(blk, i));
        }
    }
}

}  // namespace memra::blocks
