#include "token_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "progress.h"

namespace memra::gguf_tool {

std::vector<float> make_inputs(uint64_t seed, int tokens, uint64_t n) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(size_t(tokens) * n);
    for (float &v : x) v = normal(rng);
    return x;
}

namespace {

// The counters' deltas over one measurement (cache[3], resident bytes, is a level).
class CounterDelta {
public:
    explicit CounterDelta(const memra_loaded_abi &abi) : abi_(abi) {
        abi.cache_stats(&c0_[0], &c0_[1], &c0_[2], &c0_[3]);
        abi.profile_stats(&p0_[0], &p0_[1], &p0_[2], &p0_[3]);
    }
    void finish(Measurement &m) const {
        uint64_t c1[4], p1[4];
        abi_.cache_stats(&c1[0], &c1[1], &c1[2], &c1[3]);
        abi_.profile_stats(&p1[0], &p1[1], &p1[2], &p1[3]);
        for (int k = 0; k < 4; ++k) {
            m.cache[k] = k == 3 ? c1[3] : c1[k] - c0_[k];
            m.profile[k] = p1[k] - p0_[k];
        }
    }

private:
    const memra_loaded_abi &abi_;
    uint64_t c0_[4], p0_[4];
};

// Runs call(step) for steps 0..steps-1, timing each; stops at the first that returns a failure.
template <class Call>
void timed_steps(Measurement &m, const char *label, int steps, int progress, Call call) {
    Progress bar(label, uint64_t(steps), progress);
    for (int s = 0; s < steps; ++s) {
        const auto start = std::chrono::steady_clock::now();
        std::string failure = call(s);
        m.latency_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        if (!failure.empty()) {
            m.failure = std::move(failure);
            return;
        }
        bar.update(uint64_t(s) + 1);
    }
}

std::string call_failure(const char *entry, int32_t status, const char *error) {
    return status == 0 ? "" : std::string(entry) + " returned " + std::to_string(status) + ": " + error;
}

}  // namespace

Measurement measure_tokens(const memra_loaded_abi &abi, const LayerExperts &experts, const std::vector<float> &inputs,
                           uint64_t n_embd, int threads, int progress) {
    Measurement m;
    const int tokens = int(inputs.size() / n_embd);
    m.outputs.assign(size_t(tokens) * n_embd, 0.0f);
    const CounterDelta counters(abi);
    char error[1024] = "";
    timed_steps(m, "run", tokens, progress, [&](int t) {
        const int32_t status = abi.moe_token(experts.data(), experts.count(), inputs.data() + size_t(t) * n_embd,
                                             m.outputs.data() + size_t(t) * n_embd, threads, error, sizeof error);
        return call_failure("memra_cpu_moe_token_v2", status, error);
    });
    counters.finish(m);
    return m;
}

Measurement measure_rows(const memra_loaded_abi &abi, const LayerExperts &experts, const std::vector<float> &inputs,
                         uint64_t n_embd, int rows, int threads, int progress) {
    Measurement m;
    const int tokens = int(inputs.size() / n_embd), batches = (tokens + rows - 1) / rows;
    m.outputs.assign(size_t(tokens) * n_embd, 0.0f);
    std::vector<float> part, weights;
    const CounterDelta counters(abi);
    char error[1024] = "";
    timed_steps(m, "run", batches, progress, [&](int b) {
        const int32_t n = std::min(rows, tokens - b * rows);  // the last batch may be shorter
        const size_t first = size_t(b) * size_t(rows) * n_embd, values = size_t(n) * n_embd;
        part.resize(values);
        for (int32_t e = 0; e < experts.count(); ++e) {
            const CpuExpertV2 &expert = experts.data()[e];
            weights.assign(size_t(n), expert.route_weight);
            const int32_t status = abi.expert_rows(&expert, inputs.data() + first, n, weights.data(), part.data(), threads,
                                                   error, sizeof error);
            if (status != 0) return call_failure("memra_cpu_expert_rows_v2", status, error);
            for (size_t i = 0; i < values; ++i) m.outputs[first + i] += part[i];
        }
        return std::string();
    });
    counters.finish(m);
    return m;
}

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    const size_t rank = size_t(std::ceil(p * double(v.size())));  // nearest-rank
    return v[std::min(v.size() - 1, rank ? rank - 1 : 0)];
}

std::string describe_library(const memra_loaded_abi &abi) {
    if (!abi.describe) return "";
    std::string line(abi.describe(nullptr, 0) + 1, '\0');
    abi.describe(line.data(), line.size());
    line.resize(line.size() - 1);
    return line;
}

}  // namespace memra::gguf_tool
