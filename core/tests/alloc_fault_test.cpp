// Allocation faults on the file path (docs/hardening.md, fault injection): the weight cache
// cannot grow (mmap or the populating madvise refused, map_shim.h), and the memory to stream
// uncached bytes cannot be had. Refused growth is not an error: the call streams the projection
// uncached and gives the same bits (docs/file-weights.md says why); the cache stays as it was
// and grows again once memory is back. No streaming memory either is status 4, the output
// untouched, and the next valid call succeeds. Each case runs in a child process, for a cache of
// its own with a budget it states.
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

#include "child_scenario.h"
#include "eventually.h"
#include "format_mix.h"
#include "lib_call.h"
#include "map_shim.h"
#include "weights_file.h"

namespace memra::tests {
namespace {

constexpr int32_t kEmbd = 256, kFf = 256;  // a multiple of every block size
constexpr const char *kBudget = "64M";     // room for everything, once memory can be had

// Token problems of two experts, every format of the list between them (format_mix_cover()
// experts, rounded up to pairs), read from one file.
struct AllFormats {
    AllFormats() {
        for (size_t k = 0; 2 * k < format_mix_cover(); ++k)
            problems.push_back(testkit::make_token_problem(format_mix(2 * k, 2), kEmbd, kFf, 300 + k));
        std::vector<CpuProjectionV2 *> all;
        for (testkit::TokenProblem &p : problems) {
            expected.push_back(run_token(p, 1));  // from memory
            experts.push_back(p.experts.descriptors());
        }
        for (std::vector<CpuExpertV2> &e : experts)
            for (CpuProjectionV2 *p : projections_of(e)) {
                all.push_back(p);
                flat.push_back(p);
            }
        file = std::make_unique<WeightsFile>(all);
    }
    // Both problems from the file: "" when every result has the memory result's bits.
    std::string run() const {
        for (size_t k = 0; k < problems.size(); ++k) {
            std::vector<float> out(static_cast<size_t>(kEmbd));
            const CallResult r = call_token(experts[k].data(), 2, problems[k].input.data(), out.data(), 2);
            if (r.status != MEMRA_STATUS_OK) return "problem " + std::to_string(k) + ": " + r.message;
            if (!same_bits(out, expected[k])) return "problem " + std::to_string(k) + ": result differs";
        }
        return "";
    }
    int32_t prefetch() const {
        std::vector<CpuProjectionV2> projections;
        for (const CpuProjectionV2 *p : flat) projections.push_back(*p);
        char error[256] = {};
        return memra_cpu_expert_prefetch_v2(projections.data(), int32_t(projections.size()), error, sizeof error);
    }
    uint64_t projections() const { return flat.size(); }

    std::vector<testkit::TokenProblem> problems;
    std::vector<std::vector<float>> expected;
    std::vector<std::vector<CpuExpertV2>> experts;
    std::vector<CpuProjectionV2 *> flat;
    std::unique_ptr<WeightsFile> file;
};

std::string fault_name(const MapFault &f) {
    const char *kinds[] = {"mmap", "madvise(MADV_POPULATE_WRITE)", "madvise EINVAL"};
    return std::string(kinds[int(f.kind)]) + " " + std::strerror(f.error);
}

// Growth refused every way the pool can be refused: every call streams, bit for bit, nothing
// becomes resident, a prefetch is taken and skipped; then memory is back and caching resumes.
MEMRA_CHILD_SCENARIO(GrowthRefusedStreams) {
    const AllFormats t;
    for (const MapFault &fault : {MapFault{MapFault::Kind::kRefuseMap, ENOMEM}, MapFault{MapFault::Kind::kRefusePopulate, ENOMEM},
                                  MapFault{MapFault::Kind::kRefusePopulate, EFAULT},
                                  MapFault{MapFault::Kind::kRefusePopulate, EHWPOISON}}) {
        SCOPED_TRACE(fault_name(fault));
        const ArmedMapFault armed(fault);
        const CacheCounters before = cache_counters();
        const uint64_t skipped = prefetch_count("skipped"), queued = prefetch_count("queued");
        EXPECT_EQ(t.run(), "");
        ASSERT_EQ(t.prefetch(), MEMRA_STATUS_OK);
        // Every queued projection is skipped by the worker (no room), none is read.
        ASSERT_TRUE(eventually([&] { return prefetch_count("skipped") - skipped == prefetch_count("queued") - queued; }));
        EXPECT_EQ(t.run(), "") << "after the prefetch";
        const CacheCounters d = cache_counters() - before;
        EXPECT_EQ(d[0], 0u) << "hits";
        EXPECT_EQ(d[1], 2 * t.projections()) << "misses";
        EXPECT_EQ(d[2], 2 * t.file->bytes()) << "read_bytes: each call read everything";
        EXPECT_EQ(cache_counters()[3], 0u) << "resident_bytes";
        EXPECT_GE(armed.faults(), 1u) << "the fault never fired";
    }
    const CacheCounters before = cache_counters();
    EXPECT_EQ(t.run(), "") << "memory back";
    EXPECT_EQ(t.run(), "") << "memory back, again";
    const CacheCounters d = cache_counters() - before;
    EXPECT_EQ(d[0], t.projections()) << "hits: the second call";
    EXPECT_EQ(d[1], t.projections()) << "misses: the first call";
    EXPECT_EQ(cache_counters()[3], t.file->bytes()) << "resident_bytes";
}

TEST(AllocFault, CacheGrowthRefusedStreamsAndTheCacheResumes) {
    expect_child_passes("GrowthRefusedStreams", {{"MEMRA_CPU_EXPERT_CACHE_BYTES", kBudget}});
}

// What was cached before growth was refused keeps serving; what needs new memory streams.
MEMRA_CHILD_SCENARIO(GrowthRefusedKeepsTheCache) {
    const AllFormats t;
    const CpuExpertV2 *first = t.experts[0].data();
    const testkit::TokenProblem &p = t.problems[0];
    std::vector<float> out(static_cast<size_t>(kEmbd));
    ASSERT_EQ(call_token(first, 2, p.input.data(), out.data(), 2).status, MEMRA_STATUS_OK);
    const uint64_t resident = cache_counters()[3];
    ASSERT_GT(resident, 0u);
    const ArmedMapFault armed({MapFault::Kind::kRefuseMap, ENOMEM});
    for (int call = 0; call < 3; ++call) {
        const CacheCounters before = cache_counters();
        EXPECT_EQ(t.run(), "") << "call " << call;
        const CacheCounters d = cache_counters() - before;
        EXPECT_GE(d[0], 6u) << "the first problem's six projections stay cached";
        EXPECT_GE(cache_counters()[3], resident) << "nothing was evicted for memory that could not be had";
    }
    EXPECT_GE(armed.faults(), 1u);
}

TEST(AllocFault, CacheGrowthRefusedKeepsWhatIsCached) {
    expect_child_passes("GrowthRefusedKeepsTheCache", {{"MEMRA_CPU_EXPERT_CACHE_BYTES", kBudget}});
}

// A kernel without MADV_POPULATE_WRITE (before 5.14) answers EINVAL: the pool touches the pages
// itself, and the cache works as usual.
MEMRA_CHILD_SCENARIO(NoPopulateStillCaches) {
    const AllFormats t;
    const ArmedMapFault armed({MapFault::Kind::kNoPopulate, EINVAL});
    EXPECT_EQ(t.run(), "");
    const CacheCounters before = cache_counters();
    EXPECT_EQ(t.run(), "");
    EXPECT_EQ((cache_counters() - before)[0], t.projections()) << "hits";
    EXPECT_EQ(cache_counters()[3], t.file->bytes()) << "resident_bytes";
    EXPECT_GE(armed.faults(), 1u);
}

TEST(AllocFault, KernelWithoutPopulateStillCaches) {
    expect_child_passes("NoPopulateStillCaches", {{"MEMRA_CPU_EXPERT_CACHE_BYTES", kBudget}});
}

// Projections far larger than the budget and than any memory (3 x 64 TiB: F32, 2^22 x 2^22):
// not cached, and the streaming buffer cannot be had either. Status 4, before any read; the
// output untouched; the library keeps working. The file holds nothing of it: the call must fail
// before it reads.
constexpr int32_t kHuge = 1 << 22;

CpuProjectionV2 huge_projection(int fd) {
    CpuProjectionV2 p{};
    p.qtype = MEMRA_QTYPE_F32;
    p.in_features = kHuge;
    p.out_features = kHuge;
    p.row_bytes = size_t(kHuge) * 4;
    p.byte_len = p.row_bytes * size_t(kHuge);
    p.scale = 1.0f;
    p.file_fd = fd;
    return p;
}

MEMRA_CHILD_SCENARIO(NoMemoryToStreamIsStatus4) {
    const AllFormats t;
    CpuExpertV2 huge{};
    huge.gate = huge.up = huge.down = huge_projection(t.file->fd());
    huge.route_weight = 1.0f;
    const std::vector<float> input(size_t(kHuge), 0.25f), sentinel(size_t(kHuge), -5.0f);
    std::vector<float> out = sentinel;
    const CacheCounters before = cache_counters();
    const CallResult token = call_token(&huge, 1, input.data(), out.data(), 2);
    EXPECT_EQ(token.status, MEMRA_STATUS_OUT_OF_MEMORY) << token.message;
    EXPECT_NE(token.message.find("out of memory: no memory for the 211106232532992 bytes"), std::string::npos)
        << token.message;  // 3 x 64 TiB, each padded to 64 bytes (it is already)
    EXPECT_TRUE(same_bits(out, sentinel)) << "output written on failure";
    const float w = 1.0f;
    const CallResult rows = call_rows(&huge, input.data(), 1, &w, out.data(), 1);
    EXPECT_EQ(rows.status, MEMRA_STATUS_OUT_OF_MEMORY) << rows.message;
    EXPECT_TRUE(same_bits(out, sentinel)) << "output written on failure";
    char error[256] = {};
    EXPECT_EQ(memra_cpu_expert_prefetch_v2(&huge.gate, 1, error, sizeof error), MEMRA_STATUS_OK) << "a hint, skipped";
    const CacheCounters d = cache_counters() - before;
    EXPECT_EQ(d[2], 0u) << "read_bytes: nothing may be read before the memory is there";
    EXPECT_EQ(cache_counters()[3], 0u) << "resident_bytes";
    EXPECT_EQ(t.run(), "") << "the next valid calls";
}

TEST(AllocFault, NoMemoryToStreamIsStatus4) {
    // A budget of 1 MiB: the 64 TiB projections are never the cache's (the cache would map them
    // with MAP_NORESERVE and fault them in, which no machine survives).
    expect_child_passes("NoMemoryToStreamIsStatus4", {{"MEMRA_CPU_EXPERT_CACHE_BYTES", "1M"}});
}

}  // namespace
}  // namespace memra::tests
