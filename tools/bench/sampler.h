// Repeat-until-stable timing: a measurement is repeated at least min_reps times and then until
// its median stops moving (or a time or count cap is hit), and is summarised by robust statistics
// (median, p10/p90, median absolute deviation) rather than a mean that one preempted sample can
// drag. The machine these run on is shared, so single samples are noisy by nature.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace memra::bench {

struct StopRule {
    int min_reps = 10;
    int min_slow_reps = 3;     // enough when max_seconds ran out before min_reps
    int max_reps = 200;
    double max_seconds = 3.0;  // time cap for sampling one measurement
    double settle = 0.01;      // stop once the median moved less than this, relatively, over a window
};

// Statistics of a set of samples (seconds per call, or any other positive quantity).
struct Summary {
    int reps = 0;
    double median = 0, p10 = 0, p90 = 0, mad = 0;
    bool settled = false;  // the median settled before a cap stopped the repetitions
};

// Linear-interpolated quantile q in [0, 1] of samples (any order); 0 for none.
double quantile(std::vector<double> samples, double q);

// Summary of samples; settled is left false.
Summary summarize(const std::vector<double> &samples);

// Calls one_sample (it returns one measurement, e.g. seconds for one call) under rule: at least
// rule.min_reps samples, then until the median moved less than rule.settle (relatively) over the
// last 5 samples, or rule.max_seconds ran out (then at least rule.min_slow_reps), or
// rule.max_reps samples. sample_alternating with one contender.
Summary sample_until_stable(const StopRule &rule, const std::function<double()> &one_sample);

// Several contenders timed rep by rep (memra-bench --peer): round r runs contender 0, then 1, ...,
// each followed by between(i) (untimed, e.g. letting its threads go idle; may be empty). The rule
// counts rounds, stops once every contender's median settled, and allows rule.max_seconds times
// the number of contenders. One Summary per contender, in order; settled is the same for all.
std::vector<Summary> sample_alternating(const StopRule &rule, const std::vector<std::function<double()>> &contenders,
                                        const std::function<void(size_t)> &between);


}  // namespace memra::bench
