// Determinism (CONTRACT.md, "Math" and "Threads"): results are bit-identical for any threads
// value, between repeated calls, and when several engine threads call at once.
#include <gtest/gtest.h>

#include <dirent.h>
#include <pthread.h>
#include <sched.h>

#include <thread>

#include "formats.h"
#include "lib_call.h"
#include "param_names.h"

namespace memra::tests {
namespace {

using expertkit::ExpertSpec;

constexpr int32_t kEmbd = 512;
constexpr int32_t kFf = 256;

// Formats whose kernels differ the most in structure: 32-blocks, 256-blocks with mins, IQ grids,
// 64-blocks, plain floats; and a mix.
std::vector<ExpertSpec> mixed_specs() {
    return {ExpertSpec{MEMRA_QTYPE_Q4_K, MEMRA_QTYPE_IQ4_XS, MEMRA_QTYPE_Q6_K, 1, 1, 1, 0.5f},
            ExpertSpec{MEMRA_QTYPE_Q8_0, MEMRA_QTYPE_NVFP4, MEMRA_QTYPE_IQ3_S, 1, 1, 1, -0.3f},
            ExpertSpec{MEMRA_QTYPE_BF16, MEMRA_QTYPE_Q2_K, MEMRA_QTYPE_Q4_0, 1, 1, 1, 0.2f}};
}

class EveryFormat : public ::testing::TestWithParam<int32_t> {};

TEST_P(EveryFormat, TokenIsIdenticalForAnyThreadCount) {
    const int32_t q = GetParam();
    const testkit::TokenProblem p = testkit::make_token_problem(
        {expertkit::uniform_spec(q, 0.6f), expertkit::uniform_spec(q, 0.4f)}, kEmbd, kFf, 10 + uint64_t(q));
    const std::vector<float> one = run_token(p, 1);
    for (int32_t threads : {2, 7, 1000}) EXPECT_TRUE(same_bits(one, run_token(p, threads))) << threads << " threads";
    EXPECT_TRUE(same_bits(one, run_token(p, 1))) << "repeated call";
}

TEST_P(EveryFormat, RowsAreIdenticalForAnyThreadCount) {
    const int32_t q = GetParam();
    const testkit::RowsProblem p = testkit::make_rows_problem(expertkit::uniform_spec(q), 9, kEmbd, kFf, 20 + uint64_t(q));
    const std::vector<float> one = run_rows(p, 1);
    for (int32_t threads : {2, 7, 1000}) EXPECT_TRUE(same_bits(one, run_rows(p, threads))) << threads << " threads";
    EXPECT_TRUE(same_bits(one, run_rows(p, 1))) << "repeated call";
}

INSTANTIATE_TEST_SUITE_P(Threads, EveryFormat, ::testing::ValuesIn(expertkit::all_qtypes()),
                         qtype_param_name);

// Row counts around the library's likely tile sizes, with mixed formats.
TEST(Threads, RowsOfEverySizeAreIdenticalForAnyThreadCount) {
    for (int32_t rows : {1, 3, 8, 17, 64}) {
        const testkit::RowsProblem p = testkit::make_rows_problem(mixed_specs()[0], rows, kEmbd, kFf, 30 + uint64_t(rows));
        const std::vector<float> one = run_rows(p, 1);
        EXPECT_TRUE(same_bits(one, run_rows(p, 2))) << rows << " rows, 2 threads";
        EXPECT_TRUE(same_bits(one, run_rows(p, 7))) << rows << " rows, 7 threads";
    }
}

// Four engine threads calling at once, each mixing token and rows calls over different problems:
// every result equals the one computed alone. Exercises the library's thread safety and that
// concurrent calls do not share scratch state.
TEST(Threads, ConcurrentCallersGetTheSerialResults) {
    const testkit::TokenProblem token_mixed = testkit::make_token_problem(mixed_specs(), kEmbd, kFf, 40);
    const testkit::TokenProblem token_q8 = testkit::make_token_problem(
        {expertkit::uniform_spec(MEMRA_QTYPE_Q8_0, 1.0f)}, kEmbd, kFf, 41);
    const testkit::RowsProblem rows_k = testkit::make_rows_problem(mixed_specs()[0], 6, kEmbd, kFf, 42);
    const testkit::RowsProblem rows_f = testkit::make_rows_problem(mixed_specs()[2], 3, kEmbd, kFf, 43);

    const std::vector<float> expected[4] = {run_token(token_mixed, 1), run_token(token_q8, 1),
                                            run_rows(rows_k, 1), run_rows(rows_f, 1)};
    constexpr int kCallers = 4, kCalls = 25;
    int mismatches[kCallers] = {};
    std::vector<std::thread> callers;
    for (int t = 0; t < kCallers; ++t) {
        callers.emplace_back([&, t] {
            for (int i = 0; i < kCalls; ++i) {
                const int which = (t + i) % 4;
                const int threads = 1 + (i % 2);  // 2 cores: the callers already contend
                const std::vector<float> got = which == 0   ? run_token(token_mixed, threads)
                                               : which == 1 ? run_token(token_q8, threads)
                                               : which == 2 ? run_rows(rows_k, threads)
                                                            : run_rows(rows_f, threads);
                if (!same_bits(got, expected[which])) ++mismatches[t];
            }
        });
    }
    for (std::thread &c : callers) c.join();
    for (int t = 0; t < kCallers; ++t) EXPECT_EQ(mismatches[t], 0) << "caller " << t;
}

// Threads of this process (/proc/self/task entries).
int process_threads() {
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    while (const dirent *e = readdir(d))
        if (e->d_name[0] != '.') ++n;
    closedir(d);
    return n;
}

// A caller allowed on one CPU (taskset, a cpuset) asking for 8 threads: the team is sized to
// the CPUs it may run on, so the call starts no helper threads (each calling thread has helpers
// of its own, core/compute/team.h, so a fresh caller thread starts with none), and the result is the same
// bits.
TEST(Threads, TeamIsCappedByTheCallersAffinity) {
    const testkit::TokenProblem p = testkit::make_token_problem(mixed_specs(), kEmbd, kFf, 50);
    const std::vector<float> expected = run_token(p, 1);
    int before = 0, after = 0;
    bool pinned = false, same = false;
    std::thread caller([&] {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(sched_getcpu(), &one);
        pinned = pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
        before = process_threads();
        same = same_bits(expected, run_token(p, 8));
        after = process_threads();
    });
    caller.join();
    ASSERT_TRUE(pinned);
    EXPECT_TRUE(same);
    EXPECT_EQ(after, before) << "a call pinned to one CPU started helper threads";
}

}  // namespace
}  // namespace memra::tests
