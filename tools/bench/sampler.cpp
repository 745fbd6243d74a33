#include "sampler.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace memra::bench {

double quantile(std::vector<double> samples, double q) {
    if (samples.empty()) return 0;
    std::sort(samples.begin(), samples.end());
    const double pos = q * double(samples.size() - 1);
    const size_t lo = size_t(std::floor(pos));
    const size_t hi = std::min(lo + 1, samples.size() - 1);
    return samples[lo] + (pos - double(lo)) * (samples[hi] - samples[lo]);
}

Summary summarize(const std::vector<double> &samples) {
    Summary s;
    s.reps = int(samples.size());
    if (samples.empty()) return s;
    s.median = quantile(samples, 0.5);
    s.p10 = quantile(samples, 0.1);
    s.p90 = quantile(samples, 0.9);
    std::vector<double> deviations;
    deviations.reserve(samples.size());
    for (double v : samples) deviations.push_back(std::fabs(v - s.median));
    s.mad = quantile(deviations, 0.5);
    return s;
}

Summary sample_until_stable(const StopRule &rule, const std::function<double()> &one_sample) {
    using Clock = std::chrono::steady_clock;
    // The median is compared with the one `window` samples earlier: a settled median moves little
    // when a few more samples arrive, an unsettled one still drifts (warming caches, a neighbour's
    // build finishing).
    constexpr size_t window = 5;
    const Clock::time_point start = Clock::now();
    std::vector<double> samples;
    std::vector<double> medians;  // medians[i]: median of the first i + 1 samples
    bool settled = false;
    for (;;) {
        samples.push_back(one_sample());
        medians.push_back(quantile(samples, 0.5));
        const int n = int(samples.size());
        if (n >= rule.max_reps) break;
        const bool out_of_time =
            std::chrono::duration<double>(Clock::now() - start).count() >= rule.max_seconds;
        // A very slow call (the scalar backend on a big shape) stops at min_slow_reps.
        if (n < rule.min_reps && !(out_of_time && n >= rule.min_slow_reps)) continue;
        if (medians.size() > window) {
            const double now = medians.back(), before = medians[medians.size() - 1 - window];
            if (now > 0 && std::fabs(now - before) <= rule.settle * now) {
                settled = true;
                break;
            }
        }
        if (out_of_time) break;
    }
    Summary s = summarize(samples);
    s.settled = settled;
    return s;
}

}  // namespace memra::bench
