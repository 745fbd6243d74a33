// Turns an Evaluation (reference.h) and a library result into a pass/fail verdict with the
// tolerances justified below. Used by the accuracy tests and by memra-demo alike.
#pragma once

#include <string>

#include "reference.h"

namespace memra::expertkit {

// Tolerances, derived rather than tuned:
//
// vs (b), the quantization-aware reference: the library rounds exactly the same activations, so
// only float accumulation differs. A float dot product of n terms errs by at most ~sqrt(n) *
// 2^-24 relative with random-walk rounding (1.3e-6 for n = 512, 1.9e-6 for n = 1024; blocked or
// lane-wise sums do better: the scalar backend measures ~1e-7), the silu/multiply/route-weight
// steps add a few ulps. kFloatFloor = 4e-6, relative to the sum of |route weight| * ||y|| (so
// cancellation between experts cannot shrink it), leaves a factor of two over the worst
// random-walk estimate at the sizes the suites use. On top comes the flip allowance
// (reference.cpp): an h value within float error of a rounding boundary may round one step
// differently in the library; each such value may move y by one step times its down column's
// norm.
//
// vs (a), the exact reference: the difference (b) - (a) is the activation quantization error
// that ggml's scheme itself makes (CONTRACT.md: "no worse than ggml-cpu's"). Each rounded
// activation errs uniformly within +-step/2 (Q8_0/Q8_K: step = amax/127 of its block, so per
// element rms = amax / (127 sqrt 12), for Gaussian data ~ 2.5 rms / 440 ~ 0.6% of the rms for
// Q8_0 and ~0.7% for Q8_K, whose 256-blocks have a larger amax; BF16: ulp/sqrt 12 ~ 0.1%). Two
// stages (x, then h) add in quadrature after passing through the matrices and silu; reference.cpp
// propagates the per-element variances exactly to first order, giving predicted_noise (typically
// ~1e-2 relative for Q8 activations). The realised error of one call fluctuates around that
// expectation by a few percent (hundreds of independent roundings); testkit_test checks the
// model against (b) - (a) for every format. kNoiseSafety = 2 covers the fluctuation, the
// second-order terms and the fp16 rounding of Q8_0's d (2^-11 relative), and the library may
// differ from (b) by the (b) tolerance on top (triangle inequality).
inline constexpr double kFloatFloor = 4e-6;
inline constexpr double kNoiseSafety = 2.0;

struct Verdict {
    double err_exact = 0, tol_exact = 0;  // relative to ||(a)||
    double err_quant = 0, tol_quant = 0;  // relative to ||(b)||
    bool finite = true;                   // every output value is finite
    bool ok() const { return finite && err_exact <= tol_exact && err_quant <= tol_quant; }
    // "err vs exact 1.2e-02 (tol 2.5e-02), vs quant-aware 3.1e-07 (tol 1.0e-05)"
    std::string describe() const;
};

// output holds ev.exact.size() floats.
Verdict judge(const Evaluation &ev, const float *output);

}  // namespace memra::expertkit
