#include "reference.h"

#include <cmath>
#include <stdexcept>

#include "formats.h"

namespace memra::expertkit {
namespace {

// How far the library's float h may sit from (b)'s double h, relative to |h|: float dot
// products of up to a thousand terms err by at most ~sqrt(n) * 2^-24 ~ 2e-6 relative (random
// walk; measured ~1e-7), expf and the multiply add an ulp or two. 5e-6 covers that, and also the
// shift of every position in a Q8 block when the block's amax itself moves by as much. A wider
// window only makes the allowance fire more often for nothing.
constexpr double kFlipWindow = 5e-6;

double silu(double t) { return t / (1.0 + std::exp(-t)); }
double silu_derivative(double t) {
    const double s = 1.0 / (1.0 + std::exp(-t));
    return s * (1.0 + t * (1.0 - s));
}

const uint8_t *memory_weights(const CpuProjectionV2 &p) {
    if (!p.weights) throw std::invalid_argument("the reference needs memory-backed weights");
    return p.weights;
}

// One projection decoded to floats, with what the evaluation derives from it.
struct DenseProjection {
    int32_t act = 0;  // activation format its kernels consume
    int32_t in = 0, out = 0;
    double scale = 1;
    std::vector<float> w;        // out x in, row-major
    std::vector<double> col_norm;  // ||scale * W[:, j]||: how much a change of input j moves y

    explicit DenseProjection(const CpuProjectionV2 &p)
        : act(qtype_info(p.qtype).act_format), in(p.in_features), out(p.out_features),
          scale(p.scale),
          w(dequantize(p.qtype, memory_weights(p), p.out_features, p.in_features)),
          col_norm(size_t(p.in_features), 0.0) {
        for (int32_t r = 0; r < out; ++r)
            for (int32_t j = 0; j < in; ++j) col_norm[size_t(j)] += sq(row(r)[j]);
        for (double &c : col_norm) c = std::fabs(scale) * std::sqrt(c);
    }
    const float *row(int32_t r) const { return w.data() + size_t(r) * size_t(in); }
    static double sq(double v) { return v * v; }

    // scale * W x
    std::vector<double> apply(const std::vector<double> &x) const {
        std::vector<double> y(static_cast<size_t>(out));
        for (int32_t r = 0; r < out; ++r) {
            double acc = 0;
            for (int32_t j = 0; j < in; ++j) acc += double(row(r)[j]) * x[size_t(j)];
            y[size_t(r)] = scale * acc;
        }
        return y;
    }
    // The variance of scale * W x when x's elements carry independent noise of variance v.
    std::vector<double> propagate_variance(const std::vector<double> &v) const {
        std::vector<double> y(static_cast<size_t>(out));
        for (int32_t r = 0; r < out; ++r) {
            double acc = 0;
            for (int32_t j = 0; j < in; ++j) acc += sq(row(r)[j]) * v[size_t(j)];
            y[size_t(r)] = scale * scale * acc;
        }
        return y;
    }
    // x rounded through this projection's activation format, as the library does.
    std::vector<double> rounded_input(const std::vector<float> &x) const {
        const std::vector<float> q = roundtrip_activation(act, x.data(), int32_t(x.size()));
        return std::vector<double>(q.begin(), q.end());
    }
    // Per-element variance of that rounding.
    std::vector<double> rounding_variance(const std::vector<double> &x) const {
        std::vector<double> v = rounding_grid(act, x.data(), int32_t(x.size())).step;
        for (double &s : v) s = s * s / 12.0;
        return v;
    }
};

struct DenseExpert {
    DenseProjection gate, up, down;
    explicit DenseExpert(const CpuExpertV2 &e) : gate(e.gate), up(e.up), down(e.down) {}
};

struct ExpertOutcome {
    std::vector<double> exact, quant_aware;
    double noise_var = 0;  // predicted E||(b) - (a)||^2
    double flips = 0;      // flip allowance (L1 over the ambiguous h values: they may all align)
};

ExpertOutcome evaluate_expert(const DenseExpert &e, const float *input) {
    const std::vector<float> xf(input, input + e.gate.in);
    const std::vector<double> x(xf.begin(), xf.end());
    ExpertOutcome out;

    // (a)
    const std::vector<double> g = e.gate.apply(x), u = e.up.apply(x);
    std::vector<double> h(g.size());
    for (size_t j = 0; j < h.size(); ++j) h[j] = silu(g[j]) * u[j];
    out.exact = e.down.apply(h);

    // (b)
    const std::vector<double> gq = e.gate.apply(e.gate.rounded_input(xf));
    const std::vector<double> uq = e.up.apply(e.up.rounded_input(xf));
    std::vector<double> hq(gq.size());
    std::vector<float> hq_float(gq.size());
    for (size_t j = 0; j < hq.size(); ++j) {
        hq[j] = silu(gq[j]) * uq[j];
        hq_float[j] = float(hq[j]);
    }
    out.quant_aware = e.down.apply(e.down.rounded_input(hq_float));

    // Predicted noise, to first order: rounding x perturbs g and u by W dx (variance
    // W^2 var(dx)); h = silu(g) u moves by silu'(g) u dg + silu(g) du; rounding h adds its own
    // variance; down maps the sum of those through Wd^2 again.
    const std::vector<double> var_g = e.gate.propagate_variance(e.gate.rounding_variance(x));
    const std::vector<double> var_u = e.up.propagate_variance(e.up.rounding_variance(x));
    std::vector<double> var_h = e.down.rounding_variance(h);
    for (size_t j = 0; j < h.size(); ++j) {
        const double dg = silu_derivative(g[j]) * u[j], du = silu(g[j]);
        var_h[j] += dg * dg * var_g[j] + du * du * var_u[j];
    }
    for (double v : e.down.propagate_variance(var_h)) out.noise_var += v;

    // Flip allowance: h values of (b) whose distance to a rounding boundary (a half-integer
    // position) is within the float error the library's own h carries.
    const RoundingGrid grid = rounding_grid(e.down.act, hq.data(), int32_t(hq.size()));
    for (size_t j = 0; j < hq.size(); ++j) {
        if (grid.step[j] == 0) continue;
        const double frac = grid.pos[j] - std::floor(grid.pos[j]);
        if (std::fabs(frac - 0.5) <= kFlipWindow * std::fabs(grid.pos[j]))
            out.flips += grid.step[j] * e.down.col_norm[j];
    }
    return out;
}

// Accumulates weight * outcome into an Evaluation, at `offset` in its output vectors.
void accumulate(Evaluation &ev, const ExpertOutcome &o, double weight, size_t offset) {
    for (size_t i = 0; i < o.exact.size(); ++i) {
        ev.exact[offset + i] += weight * o.exact[i];
        ev.quant_aware[offset + i] += weight * o.quant_aware[i];
    }
    ev.magnitude += std::fabs(weight) * l2_norm(o.exact);
    ev.predicted_noise += weight * weight * o.noise_var;  // squared until finish()
    ev.flip_allowance += std::fabs(weight) * o.flips;
}

void finish(Evaluation &ev) { ev.predicted_noise = std::sqrt(ev.predicted_noise); }

}  // namespace

Evaluation evaluate_token(const CpuExpertV2 *experts, int32_t count, const float *input) {
    if (count < 1) throw std::invalid_argument("evaluate_token: no experts");
    Evaluation ev;
    const size_t n_out = size_t(experts[0].down.out_features);
    ev.exact.assign(n_out, 0.0);
    ev.quant_aware.assign(n_out, 0.0);
    for (int32_t i = 0; i < count; ++i) {
        const DenseExpert dense(experts[i]);
        accumulate(ev, evaluate_expert(dense, input), experts[i].route_weight, 0);
    }
    finish(ev);
    return ev;
}

Evaluation evaluate_rows(const CpuExpertV2 &expert, const float *inputs, int32_t rows,
                         const float *route_weights) {
    const DenseExpert dense(expert);
    const size_t n_in = size_t(expert.gate.in_features), n_out = size_t(expert.down.out_features);
    Evaluation ev;
    ev.exact.assign(size_t(rows) * n_out, 0.0);
    ev.quant_aware.assign(size_t(rows) * n_out, 0.0);
    for (int32_t r = 0; r < rows; ++r)
        accumulate(ev, evaluate_expert(dense, inputs + size_t(r) * n_in), route_weights[r],
                   size_t(r) * n_out);
    finish(ev);
    return ev;
}

double l2_norm(const std::vector<double> &v) {
    double s = 0;
    for (double x : v) s += x * x;
    return std::sqrt(s);
}

double relative_l2(const float *got, const std::vector<double> &ref) {
    return relative_l2(std::vector<double>(got, got + ref.size()), ref);
}

double relative_l2(const std::vector<double> &got, const std::vector<double> &ref) {
    double diff = 0;
    for (size_t i = 0; i < ref.size(); ++i) diff += (got[i] - ref[i]) * (got[i] - ref[i]);
    return std::sqrt(diff) / l2_norm(ref);
}

}  // namespace memra::expertkit
