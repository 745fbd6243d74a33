#include "lib_call.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>

namespace memra::tests {
namespace {

constexpr size_t kErrorLen = 1024;

CallResult finish(int32_t status, const char *error) {
    CallResult r;
    r.status = status;
    if (status != MEMRA_STATUS_OK) r.message = error;
    return r;
}

}  // namespace

CallResult call_token(const CpuExpertV2 *experts, int32_t count, const float *input,
                      float *output, int32_t threads) {
    char error[kErrorLen] = {};
    const int32_t status =
        memra_cpu_moe_token_v2(experts, count, input, output, threads, error, sizeof error);
    return finish(status, error);
}

CallResult call_rows(const CpuExpertV2 *expert, const float *inputs, int32_t rows,
                     const float *route_weights, float *outputs, int32_t threads) {
    char error[kErrorLen] = {};
    const int32_t status = memra_cpu_expert_rows_v2(expert, inputs, rows, route_weights, outputs,
                                                    threads, error, sizeof error);
    return finish(status, error);
}

std::vector<float> run_token(const testkit::TokenProblem &p, int32_t threads) {
    std::vector<float> out(size_t(p.experts.n_embd()), std::numeric_limits<float>::quiet_NaN());
    const CallResult r =
        call_token(p.experts.data(), p.experts.count(), p.input.data(), out.data(), threads);
    EXPECT_EQ(r.status, MEMRA_STATUS_OK) << r.message;
    return out;
}

std::vector<float> run_rows(const testkit::RowsProblem &p, int32_t threads) {
    std::vector<float> out(size_t(p.rows) * size_t(p.experts.n_embd()),
                           std::numeric_limits<float>::quiet_NaN());
    const CallResult r = call_rows(p.experts.data(), p.inputs.data(), p.rows,
                                   p.route_weights.data(), out.data(), threads);
    EXPECT_EQ(r.status, MEMRA_STATUS_OK) << r.message;
    return out;
}

bool same_bits(const std::vector<float> &a, const std::vector<float> &b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::string describe_line() {
    std::string line(4096, '\0');
    size_t need = memra_cpu_experts_describe(line.data(), line.size());
    if (need >= line.size()) {  // longer than the first guess: ask again with the size it needs
        line.assign(need + 1, '\0');
        need = memra_cpu_experts_describe(line.data(), line.size());
    }
    line.resize(need);
    return line;
}

uint64_t prefetch_count(const std::string &word) {
    const std::string line = describe_line(), tag = " " + word + " ";
    const size_t at = line.find("; prefetch queued ");
    const size_t w = at == std::string::npos ? at : line.find(tag, at);
    return w == std::string::npos ? ~0ull : std::stoull(line.substr(w + tag.size()));
}

}  // namespace memra::tests
