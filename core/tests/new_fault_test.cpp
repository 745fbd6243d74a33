// operator new refused (new_shim.h) at every allocation of a file-backed call and of a prefetch
// call in turn, and in the prefetch worker: no crash, status 0 or 4 (CONTRACT.md: 4 out of memory), the output untouched
// on failure, nothing half-done left in the cache (the next call neither hangs on an entry left
// Loading nor serves wrong bytes), and the next valid call gives the right bits.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "eventually.h"
#include "format_mix.h"
#include "lib_call.h"
#include "new_shim.h"
#include "weights_file.h"

namespace memra::tests {
namespace {

constexpr int32_t kEmbd = 256, kFf = 256;

// One token problem of format_mix_cover() experts (every format of the list), from a fresh file: its keys are new
// to the cache, so a call misses, claims and reads.
struct FreshFile {
    explicit FreshFile(const testkit::TokenProblem &p) : experts(p.experts.descriptors()), file(projections_of(experts)) {}
    std::vector<CpuExpertV2> experts;
    WeightsFile file;
};

TEST(NewFault, EveryAllocationOfAFileBackedCallInTurn) {
    const testkit::TokenProblem p = testkit::make_token_problem(format_mix(0, format_mix_cover()), kEmbd, kFf, 700);
    const std::vector<float> expected = run_token(p, 1), sentinel(static_cast<size_t>(kEmbd), -4.0f);
    uint64_t n = 1, failed = 0;
    // Every file stays open: a file deleted and created again can get the same inode number
    // (and, within the timestamps' granularity, the same key).
    std::vector<std::unique_ptr<FreshFile>> files;
    for (;; ++n) {
        files.push_back(std::make_unique<FreshFile>(p));
        FreshFile *fresh = files.back().get();
        std::vector<float> out = sentinel;
        char error[256] = {};
        int32_t status;
        uint64_t faults;
        {
            const ArmedNewFault fault = ArmedNewFault::nth_on_this_thread(n);
            status = memra_cpu_moe_token_v2(fresh->experts.data(), int32_t(fresh->experts.size()), p.input.data(), out.data(), 1, error, sizeof error);
            faults = fault.faults();
        }
        if (faults == 0) {  // the call made fewer than n allocations: all have been refused once
            ASSERT_EQ(status, MEMRA_STATUS_OK) << error;
            EXPECT_TRUE(same_bits(out, expected));
            break;
        }
        if (status != MEMRA_STATUS_OK) {
            ++failed;
            ASSERT_EQ(status, MEMRA_STATUS_OUT_OF_MEMORY) << "allocation " << n << ": " << error;
            EXPECT_NE(std::string(error).find("out of memory"), std::string::npos) << error;
            EXPECT_TRUE(same_bits(out, sentinel)) << "allocation " << n << ": output written on failure";
        } else {
            EXPECT_TRUE(same_bits(out, expected)) << "allocation " << n << " refused, yet status 0";
        }
        // The same call again, unarmed: the right bits (from what the refused call left behind).
        std::vector<float> again(static_cast<size_t>(kEmbd));
        char error2[256] = {};
        ASSERT_EQ(memra_cpu_moe_token_v2(fresh->experts.data(), int32_t(fresh->experts.size()), p.input.data(), again.data(), 1, error2, sizeof error2),
                  MEMRA_STATUS_OK)
            << "after allocation " << n << " was refused: " << error2;
        EXPECT_TRUE(same_bits(again, expected)) << "after allocation " << n << " was refused";
    }
    std::printf("refused each of the %llu allocations of the call in turn: %llu calls failed with status 4\n",
                (unsigned long long)(n - 1), (unsigned long long)failed);
    EXPECT_GT(n, 1u) << "the call allocated nothing: the shim is not in effect";
}

size_t open_fds() {
    size_t n = 0;
    for (const auto &entry : std::filesystem::directory_iterator("/proc/self/fd")) n += entry.is_symlink() ? 1 : 0;
    return n;
}

// A prefetch call with each of its allocations refused in turn: status 0 (what could not be
// queued is dropped) or 4, and no duplicated fd left open once the worker is done.
TEST(NewFault, EveryAllocationOfAPrefetchCallInTurn) {
    const testkit::TokenProblem p = testkit::make_token_problem(format_mix(8, 4), kEmbd, kFf, 702);
    std::vector<std::unique_ptr<FreshFile>> files;
    uint64_t n = 1;
    for (;; ++n) {
        files.push_back(std::make_unique<FreshFile>(p));
        std::vector<CpuProjectionV2> projections;
        for (const CpuProjectionV2 *q : projections_of(files.back()->experts)) projections.push_back(*q);
        const size_t fds = open_fds();
        char error[256] = {};
        int32_t status;
        uint64_t faults;
        {
            const ArmedNewFault fault = ArmedNewFault::nth_on_this_thread(n);
            status = memra_cpu_expert_prefetch_v2(projections.data(), int32_t(projections.size()), error, sizeof error);
            faults = fault.faults();
        }
        if (status != MEMRA_STATUS_OK) {
            EXPECT_EQ(status, MEMRA_STATUS_OUT_OF_MEMORY) << "allocation " << n << ": " << error;
        }
        EXPECT_TRUE(eventually([&] { return open_fds() == fds; })) << "allocation " << n << ": a duplicated fd stayed open";
        if (faults == 0) break;
    }
    std::printf("refused each of the %llu allocations of the prefetch call in turn\n", (unsigned long long)(n - 1));
    EXPECT_GT(n, 1u);
}

// The prefetch worker can allocate nothing: every job is skipped (not cached), the compute call
// reads for itself, and the worker lives on (the next prefetch, unarmed, caches).
TEST(NewFault, ThePrefetchWorkerSurvivesRefusedAllocations) {
    const testkit::TokenProblem p = testkit::make_token_problem(format_mix(4, 4), kEmbd, kFf, 701);
    const std::vector<float> expected = run_token(p, 1);
    FreshFile fresh(p);
    std::vector<CpuProjectionV2> projections;
    for (const CpuProjectionV2 *q : projections_of(fresh.experts)) projections.push_back(*q);
    auto prefetch = [](std::vector<CpuProjectionV2> list) {
        char error[256] = {};
        EXPECT_EQ(memra_cpu_expert_prefetch_v2(list.data(), int32_t(list.size()), error, sizeof error), MEMRA_STATUS_OK)
            << error;
    };
    // Another file's projections: the first for the warm-up, the others to show the worker lives on.
    const testkit::TokenProblem other = testkit::make_token_problem(format_mix(0, 4), kEmbd, kFf, 702);
    FreshFile warm(other);
    std::vector<CpuProjectionV2> warm_projections;
    for (const CpuProjectionV2 *q : projections_of(warm.experts)) warm_projections.push_back(*q);
    {
        // A prefetch first, unarmed, so that the worker thread exists before the fault is armed
        // (the faults then hit its jobs, not its start); its one job has ended once it is cached.
        const CacheCounters start = cache_counters();
        prefetch({warm_projections.front()});
        ASSERT_TRUE(eventually([&] { return (cache_counters() - start)[3] > 0; }))
            << "the unarmed prefetch cached nothing: " << describe_line();
    }
    const uint64_t queued = prefetch_count("queued"), skipped = prefetch_count("skipped"), failed = prefetch_count("failed");
    const CacheCounters before = cache_counters();
    {
        const ArmedNewFault fault = ArmedNewFault::every_on_other_threads();
        prefetch(projections);
        ASSERT_TRUE(eventually([&] {
            return prefetch_count("skipped") - skipped + prefetch_count("failed") - failed ==
                   prefetch_count("queued") - queued;
        })) << describe_line();
        EXPECT_GE(fault.faults(), 1u) << "the worker allocated nothing";
    }
    EXPECT_EQ((cache_counters() - before)[3], 0u) << "resident_bytes: nothing was cached";
    std::vector<float> out(static_cast<size_t>(kEmbd));
    const CallResult r = call_token(fresh.experts.data(), 4, p.input.data(), out.data(), 2);
    ASSERT_EQ(r.status, MEMRA_STATUS_OK) << r.message;
    EXPECT_TRUE(same_bits(out, expected));
    const CacheCounters after = cache_counters();
    prefetch(std::vector<CpuProjectionV2>(warm_projections.begin() + 1, warm_projections.end()));
    EXPECT_TRUE(eventually([&] { return (cache_counters() - after)[3] > 0; }))
        << "the worker cached nothing after the refused allocations: " << describe_line();
}

}  // namespace
}  // namespace memra::tests
