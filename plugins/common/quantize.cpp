// The canonical activation quantizers (see quantize.h). Written as plain scalar loops in the
// order ggml's x86 CPU backend evaluates them; each element's result depends only on its own
// value and its block's scale, so a SIMD plugin reproduces the bytes with any lane order as long
// as it performs the same f32 operations.
#include "common/quantize.h"

#include <cstring>

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

}  // namespace

// Variant (A) of spec §3.1: d = amax/127 (stored fp16, RNE), id = 127/amax (not 1/d), quants
// rounded half to even.
// Non-finite input (outside what the core feeds, but the bytes must still be defined): a NaN
// element never becomes amax (the comparison below is false for NaN; a SIMD port gets the same
// with max_ps(|v|, acc), whose NaN case returns the second operand), and every quant goes
// through cvtps2dq semantics (NaN / out of range -> INT32_MIN) then int8 saturation, exactly as
// _mm256_cvtps_epi32 + packs do. So amax = inf gives d = inf, id = 0, and the inf element -> -128.
void quantize_row_q8_0(const float *x, int32_t n, void *out) {
    uint8_t *o = static_cast<uint8_t *>(out);
    const int nb = n / q8_0_act::kBlockElems;
    for (int b = 0; b < nb; ++b) {
        const float *xb = x + size_t(b) * q8_0_act::kBlockElems;
        uint8_t *ob = o + size_t(b) * q8_0_act::kBlockBytes;

        float amax = 0.0f;
        for (int i = 0; i < q8_0_act::kBlockElems; ++i) {
            const float ax = abs_f32(xb[i]);
            if (ax > amax) amax = ax;
        }
        const float d = amax / 127.0f;
        const float id = (amax != 0.0f) ? 127.0f / amax : 0.0f;
        store_u16(ob, f32_to_fp16(d));
        int8_t *qs = reinterpret_cast<int8_t *>(ob + 2);
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
        if (amax == 0.0f) {
            // ggml leaves bsums unwritten here; zero them so the bytes are deterministic.
            std::memset(ob, 0, q8_K_act::kBlockBytes);
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
