#include "accuracy.h"

#include <cmath>
#include <cstdio>

namespace memra::expertkit {

Verdict judge(const Evaluation &ev, const float *output) {
    Verdict v;
    for (size_t i = 0; i < ev.exact.size(); ++i) v.finite = v.finite && std::isfinite(output[i]);
    const double quant_abs = kFloatFloor * ev.magnitude + ev.flip_allowance;
    v.err_quant = relative_l2(output, ev.quant_aware);
    v.tol_quant = quant_abs / l2_norm(ev.quant_aware);
    v.err_exact = relative_l2(output, ev.exact);
    v.tol_exact = (kNoiseSafety * ev.predicted_noise + quant_abs) / l2_norm(ev.exact);
    return v;
}

std::string Verdict::describe() const {
    char buf[160];
    std::snprintf(buf, sizeof buf, "err vs exact %.2e (tol %.2e), vs quant-aware %.2e (tol %.2e)%s",
                  err_exact, tol_exact, err_quant, tol_quant, finite ? "" : ", NON-FINITE values");
    return buf;
}

}  // namespace memra::expertkit
