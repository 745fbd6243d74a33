#include "sampler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

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
    return sample_alternating(rule, {one_sample}, nullptr).front();
}

std::vector<Summary> sample_alternating(const StopRule &rule, const std::vector<std::function<double()>> &contenders,
                                        const std::function<void(size_t)> &between) {
    using Clock = std::chrono::steady_clock;
    // Each median is compared with the one `window` samples earlier: a settled median moves little
    // when a few more samples arrive, an unsettled one still drifts (warming caches, a
    // neighbour's build finishing).
    constexpr size_t window = 5;
    const size_t n = contenders.size();
    const double cap = rule.max_seconds * double(std::max<size_t>(1, n));
    const Clock::time_point start = Clock::now();
    std::vector<std::vector<double>> samples(n), medians(n);
    bool settled = false;
    for (;;) {
        for (size_t i = 0; i < n; ++i) {
            samples[i].push_back(contenders[i]());
            medians[i].push_back(quantile(samples[i], 0.5));
            if (between) between(i);
        }
        const int rounds = n ? int(samples[0].size()) : rule.max_reps;
        if (rounds >= rule.max_reps) break;
        const bool out_of_time = std::chrono::duration<double>(Clock::now() - start).count() >= cap;
        if (rounds < rule.min_reps && !(out_of_time && rounds >= rule.min_slow_reps)) continue;
        if (size_t(rounds) > window) {
            settled = std::all_of(medians.begin(), medians.end(), [&](const std::vector<double> &m) {
                const double now = m.back(), before = m[m.size() - 1 - window];
                return now > 0 && std::fabs(now - before) <= rule.settle * now;
            });
            if (settled) break;
        }
        if (out_of_time) break;
    }
    std::vector<Summary> out;
    for (const std::vector<double> &s : samples) {
        out.push_back(summarize(s));
        out.back().settled = settled;
    }
    return out;
}

}  // namespace memra::bench
