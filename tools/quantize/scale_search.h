// Sub-block scale fitting shared by the K-quant and i-quant encoders: a grid of candidate scales
// around the obvious one (the largest value mapped to the extreme level), each followed by a
// least-squares refit of the scale for the levels it chose; the candidate with the smallest
// squared error wins. This is the idea of ggml's make_qx_quants / make_qkx2_quants without their
// importance weights: simple, and never worse than the plain amax scale (which is one candidate).
#pragma once

#include <cstdint>

namespace memra::quantize {

// x ~ scale * q with integer q in [-nmax, nmax - 1] (the value of largest magnitude maps to
// -nmax, the level with no positive twin; scale takes the sign that does this). Returns scale
// (0 for an all-zero x) and the levels in q.
float fit_symmetric(const float *x, int n, int nmax, int *q);

// x ~ scale * q - min with q in [0, qmax], scale >= 0 and min >= 0 (the formats store an
// unsigned min that is subtracted, so only offsets <= 0 are representable: a sub-block whose
// values are all positive keeps min = 0).
struct Affine {
    float scale = 0, min = 0;
};
Affine fit_affine(const float *x, int n, int qmax, int *q);

// x ~ scale * book[code] for a code book of `size` sorted integer levels (IQ4_XS's non-uniform
// one). Returns scale and the codes.
float fit_codebook(const float *x, int n, const int8_t *book, int size, int *code);

// The index of the level of book nearest to v (book sorted ascending).
int nearest_level(const int8_t *book, int size, float v);

inline int clamp_int(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

// The largest-magnitude value of x[0..n), with its sign.
float signed_absmax(const float *x, int n);

}  // namespace memra::quantize
