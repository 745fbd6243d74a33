// The canonical activation quantizers (see quantize.h). Written as plain scalar loops in the
// order ggml's x86 CPU backend evaluates them; each element's result depends only on its own
// value and its block's scale, so a SIMD plugin reproduces the bytes with any lane order as long
// as it performs the same f32 operations.
#include "common/quantize.h"

#include <cstring>
#include <limits>

#include "common/act_layout.h"
#include "common/bytes.h"
#include "common/fp_convert.h"

namespace memra {

void quantize_row_f32(const float *x, int32_t n, void *out) {
    std::memcpy(out, x, size_t(n) * sizeof(float));
}

void quantize_row_bf16(const float *x, int32_t n, void *out) {
    uint8_t *o = static_cast<uint8_t *>(out);
    for (int32_t i = 0; i < n; ++i) store_u16(o + 2 * size_t(i), f32_to_bf16(x[i]));
}

namespace {

float abs_f32(float v) { return f32_from_bits(f32_bits(v) & 0x7FFFFFFFu); }

int8_t saturate_i8(int32_t v) { return int8_t(v < -128 ? -128 : v > 127 ? 127 : v); }

// A block holding a NaN or an infinity has no int8 representation, and ggml's bytes for one are
// an accident of its instructions (cvtps2dq turns the element into INT32_MIN, saturated to -128,
// and a scale of inf or of the largest finite magnitude): a silently finite, wrong result, which
// a SIMD kernel's sign trick (vpsignb cannot negate -128) then even turns into a different one.
// Instead such a block is written as all-zero codes with a NaN scale, so every dot product that
// reads it, in every plugin, is NaN: the non-finite input reaches the output as f32 arithmetic
// would carry it. Finite blocks keep ggml's exact bytes.
bool block_is_finite(const float *xb, int n) {
    bool finite = true;
    for (int i = 0; i < n; ++i) finite &= abs_f32(xb[i]) <= 3.40282347e38f;  // false for NaN, inf
    return finite;
}

}  // namespace

// Variant (A) of spec §3.1: d = amax/127 (stored fp16, RNE), id = 127/amax (not 1/d), quants
// rounded half to even. Finite input never leaves -127..127 (|x * 127/amax| <= 127).
void quantize_row_q8_0(const float *x, int32_t n, void *out) {
    uint8_t *o = static_cast<uint8_t *>(out);
    const int nb = n / q8_0_act::kBlockElems;
    for (int b = 0; b < nb; ++b) {
        const float *xb = x + size_t(b) * q8_0_act::kBlockElems;
        uint8_t *ob = o + size_t(b) * q8_0_act::kBlockBytes;
        int8_t *qs = reinterpret_cast<int8_t *>(ob + 2);
        if (!block_is_finite(xb, q8_0_act::kBlockElems)) {
            store_u16(ob, 0x7E00);  // fp16 quiet NaN
            std::memset(qs, 0, q8_0_act::kBlockElems);
            continue;
        }
        float amax = 0.0f;
        for (int i = 0; i < q8_0_act::kBlockElems; ++i) {
            const float ax = abs_f32(xb[i]);
            if (ax > amax) amax = ax;
        }
        const float d = amax / 127.0f;
        const float id = (amax != 0.0f) ? 127.0f / amax : 0.0f;
        store_u16(ob, f32_to_fp16(d));
        for (int i = 0; i < q8_0_act::kBlockElems; ++i)
            qs[i] = saturate_i8(round_to_i32_rne(xb[i] * id));
    }
}

// Spec §3.2, ggml's quantize_row_q8_K_ref: the first element of strictly largest magnitude
// fixes the signed max; iscale = -127/max (so that element becomes -127); only the upper clamp
// exists; d = 1/iscale. The int -> int8 narrowing keeps the low byte like ggml's implicit
// conversion (matters only for the wrapped nearest_int results of absurd scales).
void quantize_row_q8_K(const float *x, int32_t n, void *out) {
    uint8_t *o = static_cast<uint8_t *>(out);
    const int nb = n / q8_K_act::kBlockElems;
    for (int b = 0; b < nb; ++b) {
        const float *xb = x + size_t(b) * q8_K_act::kBlockElems;
        uint8_t *ob = o + size_t(b) * q8_K_act::kBlockBytes;
        int8_t *qs = reinterpret_cast<int8_t *>(ob + q8_K_act::kQsOffset);

        float amax = 0.0f, max = 0.0f;
        for (int i = 0; i < q8_K_act::kBlockElems; ++i) {
            const float ax = abs_f32(xb[i]);
            if (ax > amax) {
                amax = ax;
                max = xb[i];
            }
        }
        const bool finite = block_is_finite(xb, q8_K_act::kBlockElems);
        if (amax == 0.0f || !finite) {
            // ggml leaves bsums unwritten for an all-zero block; zero them so the bytes are
            // deterministic. A non-finite block: zero codes, NaN scale (see above).
            std::memset(ob, 0, q8_K_act::kBlockBytes);
            if (!finite) store_f32(ob, std::numeric_limits<float>::quiet_NaN());
            continue;
        }
        const float iscale = -127.0f / max;
        for (int i = 0; i < q8_K_act::kBlockElems; ++i) {
            const int32_t v = nearest_int(iscale * xb[i]);
            qs[i] = int8_t(uint8_t(uint32_t(v < 127 ? v : 127) & 0xFF));
        }
        for (int j = 0; j < 16; ++j) {
            int32_t sum = 0;
            for (int t = 0; t < 16; ++t) sum += qs[16 * j + t];
            store_i16(ob + q8_K_act::kBsumsOffset + 2 * j, int16_t(sum));
        }
        store_f32(ob, 1.0f / iscale);
    }
}

}  // namespace memra
