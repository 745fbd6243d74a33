#include "scale_search.h"

#include <cmath>

#include "common/fp_convert.h"

namespace memra::quantize {
namespace {

// The best candidate so far: the smallest squared error, with its scale and its n codes.
struct Best {
    double err = INFINITY;
    float scale = 0;
    void offer(double e, float s, const int *codes, int *out, int n) {
        if (!(e < err)) return;
        err = e;
        scale = s;
        for (int i = 0; i < n; ++i) out[i] = codes[i];
    }
};

// The squared error of x against scale * levels, minimised over scale: sum x^2 - (x.q)^2 / q.q.
// Also returns that best scale.
double refit(const float *x, const int *q, int n, float *scale) {
    double xq = 0, qq = 0, xx = 0;
    for (int i = 0; i < n; ++i) {
        xq += double(x[i]) * q[i];
        qq += double(q[i]) * q[i];
        xx += double(x[i]) * x[i];
    }
    *scale = qq > 0 ? float(xq / qq) : 0.0f;
    return qq > 0 ? xx - xq * xq / qq : xx;
}

}  // namespace

float signed_absmax(const float *x, int n) {
    float m = 0;
    for (int i = 0; i < n; ++i)
        if (std::fabs(x[i]) > std::fabs(m)) m = x[i];
    return m;
}

float fit_symmetric(const float *x, int n, int nmax, int *q) {
    const float max = signed_absmax(x, n);
    if (max == 0) {
        for (int i = 0; i < n; ++i) q[i] = 0;
        return 0;
    }
    Best best;
    int trial[256];
    // Candidates: the largest value mapped to -(nmax + 0.1 k), k = -9..9 (a slightly larger or
    // smaller step than the amax one; clamping absorbs the overshoot).
    for (int k = -9; k <= 9; ++k) {
        const float iscale = -(float(nmax) + 0.1f * float(k)) / max;
        for (int i = 0; i < n; ++i) trial[i] = clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1);
        float scale;
        const double err = refit(x, trial, n, &scale);
        best.offer(err, scale, trial, q, n);
    }
    return best.scale;
}

Affine fit_affine(const float *x, int n, int qmax, int *q) {
    float lo = x[0], hi = x[0];
    for (int i = 1; i < n; ++i) {
        lo = std::fmin(lo, x[i]);
        hi = std::fmax(hi, x[i]);
    }
    lo = std::fmin(lo, 0.0f);  // only offsets <= 0 are representable
    Affine best;
    if (hi <= lo) {  // all values equal lo (<= 0): q = 0, min = -lo
        for (int i = 0; i < n; ++i) q[i] = 0;
        best.min = -lo;
        return best;
    }
    double best_err = INFINITY;
    int trial[256];
    // Candidates: qmax + 0.1 k steps across [lo, hi], k = -5..10 (ggml's rmin/rdelta range).
    for (int k = -5; k <= 10; ++k) {
        const float iscale = (float(qmax) + 0.1f * float(k)) / (hi - lo);
        for (int i = 0; i < n; ++i) trial[i] = clamp_int(nearest_int(iscale * (x[i] - lo)), 0, qmax);
        // Least squares for x ~ s q + b: [qq q1; q1 n] [s b] = [xq x1].
        double qq = 0, q1 = 0, xq = 0, x1 = 0;
        for (int i = 0; i < n; ++i) {
            qq += double(trial[i]) * trial[i];
            q1 += trial[i];
            xq += double(x[i]) * trial[i];
            x1 += x[i];
        }
        const double det = qq * n - q1 * q1;
        double s = det > 0 ? (xq * n - x1 * q1) / det : 0;
        double b = det > 0 ? (qq * x1 - q1 * xq) / det : x1 / n;
        if (b > 0) {  // not representable: refit the scale alone with b = 0
            b = 0;
            s = qq > 0 ? xq / qq : 0;
        }
        if (s < 0) continue;
        double err = 0;
        for (int i = 0; i < n; ++i) {
            const double e = x[i] - (s * trial[i] + b);
            err += e * e;
        }
        if (err < best_err) {
            best_err = err;
            best.scale = float(s);
            best.min = float(-b);
            for (int i = 0; i < n; ++i) q[i] = trial[i];
        }
    }
    return best;
}

int nearest_level(const int8_t *book, int size, float v) {
    int best = 0;
    float best_d = std::fabs(v - float(book[0]));
    for (int k = 1; k < size; ++k) {
        const float d = std::fabs(v - float(book[k]));
        if (d < best_d) {
            best_d = d;
            best = k;
        }
    }
    return best;
}

float fit_codebook(const float *x, int n, const int8_t *book, int size, int *code) {
    const float max = signed_absmax(x, n);
    if (max == 0) {
        for (int i = 0; i < n; ++i) code[i] = nearest_level(book, size, 0.0f);
        return 0;
    }
    Best best;
    int trial[256], level[256];
    // Candidates: the largest value mapped near either end of the book, in 12 steps each.
    for (int end = 0; end < 2; ++end) {
        const float extreme = float(end == 0 ? book[0] : book[size - 1]);
        for (int k = 0; k < 12; ++k) {
            const float scale = max / (extreme * (1.0f - 0.03f * float(k)));
            if (!(scale > 0) && !(scale < 0)) continue;
            for (int i = 0; i < n; ++i) {
                trial[i] = nearest_level(book, size, x[i] / scale);
                level[i] = book[trial[i]];
            }
            float s;
            const double err = refit(x, level, n, &s);
            best.offer(err, s, trial, code, n);
        }
    }
    return best.scale;
}

}  // namespace memra::quantize
