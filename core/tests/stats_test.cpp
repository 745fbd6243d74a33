// The process-wide counters (CONTRACT.md, "Counters"): every pointer may be NULL, the profile
// times grow with compute calls, and memory-backed weights never touch the cache counters.
#include <gtest/gtest.h>

#include <array>

#include "lib_call.h"

namespace memra::tests {
namespace {

using Counters = std::array<uint64_t, 4>;

Counters cache_stats() {
    Counters c{};
    memra_cpu_expert_cache_stats_v2(&c[0], &c[1], &c[2], &c[3]);
    return c;
}

Counters profile_stats() {
    Counters c{};
    memra_cpu_expert_profile_stats_v2(&c[0], &c[1], &c[2], &c[3]);
    return c;
}

testkit::TokenProblem small_problem() {
    return testkit::make_token_problem({expertkit::uniform_spec(MEMRA_QTYPE_Q4_K, 0.7f),
                                        expertkit::uniform_spec(MEMRA_QTYPE_Q8_0, 0.3f)},
                                       512, 256, 5);
}

TEST(Stats, NullPointersAreSkipped) {
    memra_cpu_expert_cache_stats_v2(nullptr, nullptr, nullptr, nullptr);
    memra_cpu_expert_profile_stats_v2(nullptr, nullptr, nullptr, nullptr);
    // Each pointer alone, the others NULL: the one given is written, reading the same counter as
    // when all four are given (no other call runs in this process).
    const Counters cache = cache_stats(), profile = profile_stats();
    for (int i = 0; i < 4; ++i) {
        uint64_t v[4] = {~0ull, ~0ull, ~0ull, ~0ull};
        uint64_t *p[4] = {nullptr, nullptr, nullptr, nullptr};
        p[i] = &v[i];
        memra_cpu_expert_cache_stats_v2(p[0], p[1], p[2], p[3]);
        EXPECT_EQ(v[i], cache[size_t(i)]) << "cache counter " << i;
        v[i] = ~0ull;
        memra_cpu_expert_profile_stats_v2(p[0], p[1], p[2], p[3]);
        EXPECT_LE(profile[size_t(i)], v[i]) << "profile counter " << i << " went backwards";
        EXPECT_NE(v[i], ~0ull) << "profile counter " << i << " not written";
    }
}

TEST(Stats, ProfileTimesGrowWithCalls) {
    const testkit::TokenProblem token = small_problem();
    const testkit::RowsProblem rows = testkit::make_rows_problem(expertkit::uniform_spec(MEMRA_QTYPE_Q6_K), 4, 512, 256, 6);
    Counters before = profile_stats();
    for (int call = 0; call < 3; ++call) {
        run_token(token, 2);
        const Counters after_token = profile_stats();
        EXPECT_GT(after_token[0], before[0]) << "prepare_ns did not grow (token call " << call << ")";
        EXPECT_GT(after_token[3], before[3]) << "compute_ns did not grow (token call " << call << ")";
        run_rows(rows, 2);
        const Counters after_rows = profile_stats();
        EXPECT_GT(after_rows[0], after_token[0]) << "prepare_ns did not grow (rows call " << call << ")";
        EXPECT_GT(after_rows[3], after_token[3]) << "compute_ns did not grow (rows call " << call << ")";
        for (size_t i = 0; i < 4; ++i) EXPECT_GE(after_rows[i], before[i]) << "profile counter " << i << " went backwards";
        before = after_rows;
    }
}

TEST(Stats, MemoryWeightsLeaveTheCacheCountersAlone) {
    const Counters before = cache_stats();
    const testkit::TokenProblem token = small_problem();
    run_token(token, 2);
    run_token(token, 1);
    const testkit::RowsProblem rows = testkit::make_rows_problem(expertkit::uniform_spec(MEMRA_QTYPE_BF16), 2, 512, 256, 7);
    run_rows(rows, 2);
    // Prefetch skips memory-backed projections (and returns at once).
    const CpuProjectionV2 projections[3] = {token.experts[0].gate, token.experts[0].up, token.experts[1].down};
    char error[256] = {};
    EXPECT_EQ(memra_cpu_expert_prefetch_v2(projections, 3, error, sizeof error), MEMRA_STATUS_OK) << error;
    EXPECT_EQ(cache_stats(), before) << "hits, misses, read_bytes, resident_bytes";
    const Counters profile = profile_stats();
    EXPECT_EQ(profile[1], 0u) << "io_ns grew without any file read";
    EXPECT_EQ(profile[2], 0u) << "insert_ns grew without any cache insertion";
}

}  // namespace
}  // namespace memra::tests
