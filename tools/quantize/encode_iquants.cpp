// The i-quants (spec §4.10, §4.12): IQ4_XS codes each value with a non-uniform 16-level book,
// IQ3_S codes groups of four magnitudes with one of 512 grid points plus explicit signs.
#include <cmath>
#include <cstring>
#include <initializer_list>

#include "block_encoders.h"
#include "common/bytes.h"
#include "common/fp_convert.h"
#include "common/tables.h"
#include "scale_search.h"

namespace memra::quantize {
namespace {

// The IQ3_S grid as floats, and the inverse map from a quadruple of odd magnitudes to its grid
// index (-1 for the 4096 - 512 quadruples the grid lacks). A quadruple is keyed by its four level
// numbers (m - 1) / 2 in 0..7, element 0 in the low three bits.
struct Iq3sGrid {
    float g[512][4];
    int16_t index_of[4096];
    Iq3sGrid() {
        for (int16_t &i : index_of) i = -1;
        for (int k = 0; k < 512; ++k) {
            int key = 0;
            for (int t = 0; t < 4; ++t) {
                const uint32_t m = (kIq3sGrid[k] >> (8 * t)) & 0xFF;
                g[k][t] = float(m);
                key |= int((m - 1) / 2) << (3 * t);
            }
            index_of[key] = int16_t(k);
        }
    }
};
const Iq3sGrid &iq3s_grid() {
    static const Iq3sGrid grid;
    return grid;
}

// The grid point nearest to the four magnitudes a[0..4) / scale. The squared distance is a sum of
// per-element terms, so when the quadruple of per-element nearest odd levels is itself a grid
// point it is the nearest one (a lookup); otherwise all 512 points are searched.
int nearest_grid_point(const float *a, float scale) {
    const Iq3sGrid &grid = iq3s_grid();
    float v[4];
    int key = 0;
    for (int t = 0; t < 4; ++t) {
        v[t] = a[t] / scale;
        const int level = clamp_int(nearest_int((v[t] - 1.0f) * 0.5f), 0, 7);  // odd magnitude 2 level + 1
        key |= level << (3 * t);
    }
    if (grid.index_of[key] >= 0) return grid.index_of[key];
    int best = 0;
    float best_d = INFINITY;
    for (int k = 0; k < 512; ++k) {
        float d = 0;
        for (int t = 0; t < 4; ++t) {
            const float e = v[t] - grid.g[k][t];
            d += e * e;
        }
        if (d < best_d) {
            best_d = d;
            best = k;
        }
    }
    return best;
}

// One IQ3_S sub-block of 32 magnitudes: the scale s > 0 with grid points minimising the squared
// error. Candidates put the largest magnitude on each odd grid level 15 ... 1 (low ones matter for
// flat sub-blocks: the only grid point of four equal magnitudes is (1,1,1,1)); each is refit by
// least squares for the points it chose.
float fit_iq3s_subblock(const float *a) {
    float amax = 0;
    for (int i = 0; i < 32; ++i) amax = std::fmax(amax, a[i]);
    if (amax == 0) return 0;
    const Iq3sGrid &grid = iq3s_grid();
    float best_scale = amax / 15.0f;
    double best_err = INFINITY;
    for (float top : {15.0f, 13.0f, 11.0f, 9.0f, 7.0f, 5.0f, 3.0f, 1.0f}) {
        double ag = 0, gg = 0, aa = 0;
        for (int g = 0; g < 8; ++g) {
            const int k = nearest_grid_point(a + 4 * g, amax / top);
            for (int t = 0; t < 4; ++t) {
                ag += double(a[4 * g + t]) * grid.g[k][t];
                gg += double(grid.g[k][t]) * grid.g[k][t];
                aa += double(a[4 * g + t]) * a[4 * g + t];
            }
        }
        const double err = aa - ag * ag / gg;  // gg > 0: every grid magnitude is >= 1
        if (err < best_err) {
            best_err = err;
            best_scale = float(ag / gg);
        }
    }
    return best_scale;
}

}  // namespace

// §4.12: eight sub-blocks of 32 with signed 6-bit scales (ls - 32) against an fp16 d; each value
// the nearest book level of x / (d * (ls - 32)).
void encode_iq4_xs(const float *x, uint8_t *out) {
    int codes[32];
    float scales[8];
    for (int b = 0; b < 8; ++b) scales[b] = fit_codebook(x + 32 * b, 32, kValuesIq4nl, 16, codes);
    const float max = signed_absmax(scales, 8);
    const uint16_t d16 = f32_to_fp16(max / -32.0f);  // the largest scale maps to ls - 32 = -32
    const float d = fp16_to_f32(d16);
    std::memset(out, 0, 136);
    store_u16(out, d16);
    uint16_t scales_h = 0;
    for (int b = 0; b < 8; ++b) {
        const int ls = d != 0 ? clamp_int(nearest_int(scales[b] / d), -32, 31) : 0;
        const int stored = ls + 32;
        out[4 + b / 2] |= uint8_t((stored & 15) << (4 * (b % 2)));
        scales_h = uint16_t(scales_h | (stored >> 4) << (2 * b));
        const float dl = d * float(ls);
        for (int r = 0; r < 32; ++r) {
            const int code = nearest_level(kValuesIq4nl, 16, dl != 0 ? x[32 * b + r] / dl : 0.0f);
            out[8 + 16 * b + r % 16] |= uint8_t(code << (r < 16 ? 0 : 4));
        }
    }
    store_u16(out + 2, scales_h);
}

// §4.10: eight sub-blocks of 32 with odd scales 1 + 2 s4 against an fp16 d > 0; magnitudes from
// the grid, signs explicit.
void encode_iq3_s(const float *x, uint8_t *out) {
    float a[256], scales[8];
    for (int i = 0; i < 256; ++i) a[i] = std::fabs(x[i]);
    float max = 0;
    for (int b = 0; b < 8; ++b) max = std::fmax(max, scales[b] = fit_iq3s_subblock(a + 32 * b));
    const uint16_t d16 = f32_to_fp16(max / 31.0f);  // the largest scale maps to ls = 31
    const float d = fp16_to_f32(d16);
    std::memset(out, 0, 110);
    store_u16(out, d16);
    for (int b = 0; b < 8; ++b) {
        const int s4 = d > 0 ? clamp_int(nearest_int((scales[b] / d - 1.0f) / 2.0f), 0, 15) : 0;
        out[106 + b / 2] |= uint8_t(s4 << (4 * (b % 2)));
        const float db = d * float(1 + 2 * s4);
        for (int k = 0; k < 8; ++k) {
            const int g = 8 * b + k;
            const int idx = db > 0 ? nearest_grid_point(a + 4 * g, db) : 0;
            out[2 + g] = uint8_t(idx & 0xFF);
            out[66 + b] |= uint8_t((idx >> 8) << k);
        }
    }
    for (int i = 0; i < 256; ++i)
        if (x[i] < 0) out[74 + i / 8] |= uint8_t(1u << (i % 8));
}

}  // namespace memra::quantize
