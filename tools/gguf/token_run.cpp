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

Measurement measure_tokens(const memra_testkit_abi &abi, const LayerExperts &experts, const std::vector<float> &inputs,
                           uint64_t n_embd, int threads, int progress) {
    Measurement m;
    const int tokens = int(inputs.size() / n_embd);
    m.outputs.assign(size_t(tokens) * n_embd, 0.0f);
    uint64_t c0[4], p0[4], c1[4], p1[4];
    abi.cache_stats(&c0[0], &c0[1], &c0[2], &c0[3]);
    abi.profile_stats(&p0[0], &p0[1], &p0[2], &p0[3]);
    Progress bar("run", uint64_t(tokens), progress);
    char error[1024] = "";
    for (int t = 0; t < tokens; ++t) {
        const auto start = std::chrono::steady_clock::now();
        const int32_t status = abi.moe_token(experts.data(), experts.count(), inputs.data() + size_t(t) * n_embd,
                                             m.outputs.data() + size_t(t) * n_embd, threads, error, sizeof error);
        m.latency_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        if (status != 0) {
            m.failure = "memra_cpu_moe_token_v2 returned " + std::to_string(status) + ": " + error;
            break;
        }
        bar.update(uint64_t(t) + 1);
    }
    abi.cache_stats(&c1[0], &c1[1], &c1[2], &c1[3]);
    abi.profile_stats(&p1[0], &p1[1], &p1[2], &p1[3]);
    for (int k = 0; k < 4; ++k) {
        m.cache[k] = k == 3 ? c1[3] : c1[k] - c0[k];  // resident bytes is a level, not a counter
        m.profile[k] = p1[k] - p0[k];
    }
    return m;
}

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    const size_t rank = size_t(std::ceil(p * double(v.size())));  // nearest-rank
    return v[std::min(v.size() - 1, rank ? rank - 1 : 0)];
}

std::string describe_library(const memra_testkit_abi &abi) {
    if (!abi.describe) return "";
    std::string line(abi.describe(nullptr, 0) + 1, '\0');
    abi.describe(line.data(), line.size());
    line.resize(line.size() - 1);
    return line;
}

}  // namespace memra::gguf_tool
