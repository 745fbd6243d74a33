#include "timing.h"

#include <algorithm>

namespace memra::demo {
namespace {

// `calls` inputs for one token call each: the case's tokens, over again as needed.
std::vector<float> cycled_tokens(const std::vector<float> &inputs, size_t n_embd, int calls) {
    const size_t tokens = inputs.size() / n_embd;
    std::vector<float> out;
    for (int k = 0; k < calls; ++k) {
        const auto first = inputs.begin() + int64_t((size_t(k) % tokens) * n_embd);
        out.insert(out.end(), first, first + int64_t(n_embd));
    }
    return out;
}

// `calls` batches of the case's first batch (min(rows, tokens) tokens), one after the other.
std::vector<float> repeated_batch(const std::vector<float> &inputs, size_t values, int calls) {
    std::vector<float> out;
    for (int k = 0; k < calls; ++k) out.insert(out.end(), inputs.begin(), inputs.begin() + int64_t(values));
    return out;
}

gguf_tool::Measurement measure(const memra_loaded_abi &abi, const gguf_tool::LayerExperts &experts, const Case &c,
                               int calls, int threads) {
    const size_t n = c.layer.n_embd;
    if (!c.rows) return gguf_tool::measure_tokens(abi, experts, cycled_tokens(c.inputs, n, calls), n, threads, 0);
    const int batch = int(std::min<size_t>(size_t(c.rows), c.inputs.size() / n));
    return gguf_tool::measure_rows(abi, experts, repeated_batch(c.inputs, size_t(batch) * n, calls), n, batch, threads, 0);
}

}  // namespace

void time_cases(const memra_loaded_abi &abi, const gguf::File &file, std::vector<Case> &cases, int threads) {
    for (Case &c : cases) {
        if (!c.result.failure.empty()) continue;
        const gguf_tool::LayerExperts experts(file, c.layer, c.selection.experts, c.selection.route_weights, c.source);
        gguf_tool::Measurement m = measure(abi, experts, c, kWarmupCalls, threads);
        if (m.failure.empty()) m = measure(abi, experts, c, kTimedCalls, threads);
        if (!m.failure.empty()) {
            c.result.failure = "timing the warm calls: " + m.failure;
            continue;
        }
        c.timed_s = std::move(m.latency_s);
    }
}

}  // namespace memra::demo
