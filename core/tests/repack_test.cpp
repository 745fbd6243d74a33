// The repack path for file-backed weights (core/dispatch/backend_registry.h, "Weights in a
// plugin's own layout"), end to end, with the test build rows_interleaved forced: its kernels read
// only their own layout (rows interleaved in groups of 4, plugins/simd/interleaved_rows.h), so
// unrepacked bytes would give wrong numbers. Checked: the plan gives file-backed projections the
// repacking kernel when the cache is on and memory-backed ones the ggml-layout kernel; the matrix
// repacked in pieces equals its repack as a whole (partial last group included); a cache entry in
// the plugin's layout and one in ggml's of the same bytes live side by side; token and rows calls
// from the file equal the memory path bit for bit (several formats, row counts that are not
// multiples of 4); the prefetcher fills the entry the calls look for, and a call then only hits;
// no memory for the repack buffer is status 4.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "compute/call_plan.h"
#include "compute/moe.h"
#include "dispatch/backend_registry.h"
#include "dispatch/cpu_features.h"
#include "dispatch/settings.h"
#include "error.h"
#include "library.h"
#include "problems.h"
#include "projection_file.h"
#include "weights/cache.h"
#include "weights/io.h"
#include "weights/prefetch.h"
#include "weights/repack.h"
#include "weights/weight_source.h"

namespace memra {
namespace {

// The core's choice with rows_interleaved forced, the plugins below it serving what it leaves.
const BackendRegistry &forced() {
    static const BackendRegistry registry = [] {
        Settings settings = read_settings();
        settings.backend = "rows_interleaved";
        settings.plugin_dir = MEMRA_TEST_BUILD_DIR;
        return BackendRegistry(settings, detect_cpu_features(), MEMRA_TEST_BACKEND_DIR);
    }();
    return registry;
}

class Repack : public ::testing::Test {
protected:
    void SetUp() override {
        const std::string &why = forced().unusable_reason();
        const size_t lacks = why.find("cpu lacks ");
        if (lacks != std::string::npos)  // conformance/ci/check-skips knows this reason
            GTEST_SKIP() << "this CPU lacks " << why.substr(lacks + 10) << " (needed by the rows_interleaved test build)";
        ASSERT_TRUE(forced().usable()) << forced().unusable_reason();
    }
};

const memra_kernel_v2 &interleaved_kernel(int32_t qtype, KernelPath path) {
    const KernelChoice c = forced().kernel_for(qtype, path, /*any_layout=*/true);
    EXPECT_NE(c.kernel, nullptr);
    EXPECT_STREQ(c.backend->name, "rows_interleaved");
    return *c.kernel;
}

std::vector<uint8_t> repacked(const memra_kernel_v2 &k, const std::vector<uint8_t> &ggml, size_t row_bytes,
                              int32_t rows, int32_t n) {
    std::vector<uint8_t> out(ggml.size());
    k.repack(ggml.data(), row_bytes, rows, n, out.data());
    return out;
}

std::vector<uint8_t> random_bytes(size_t count, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<uint8_t> v(count);
    for (uint8_t &b : v) b = uint8_t(rng());
    return v;
}

CacheKey key_of(const CpuProjectionV2 &p, uint32_t layout) {
    return CacheKey{identify_file(p.file_fd, p.file_offset, p.byte_len), p.file_offset, p.byte_len, layout};
}

bool same_bits(const std::vector<float> &a, const std::vector<float> &b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

testkit::TokenProblem problem(int32_t gate, int32_t up, int32_t down, int32_t n_embd, int32_t n_ff, uint64_t seed) {
    return testkit::make_token_problem({expertkit::ExpertSpec{gate, up, down, 1, 1, 1, 0.7f},
                                        expertkit::ExpertSpec{down, gate, up, 1, 1, 1, -0.3f}},
                                       n_embd, n_ff, seed);
}

TEST_F(Repack, FileBackedProjectionsWithTheCacheOnTakeTheRepackingKernel) {
    testkit::TokenProblem p = problem(MEMRA_QTYPE_Q4_K, MEMRA_QTYPE_Q8_0, MEMRA_QTYPE_F32, 512, 256, 1);
    std::vector<CpuExpertV2> experts = p.experts.descriptors();
    experts[0].gate.file_fd = experts[0].up.file_fd = experts[0].down.file_fd = 0;  // planning reads nothing
    for (int32_t m : {1, 5}) {
        CallPlan plan;
        plan_call(forced(), experts.data(), 2, m, m == 1 ? nullptr : p.input.data(), plan, /*file_cache=*/true);
        for (int32_t k = 0; k < kProjectionKinds; ++k) {
            EXPECT_NE(plan.experts[0].projection[k].kernel->layout, MEMRA_LAYOUT_GGML) << "file-backed, m " << m;
            EXPECT_EQ(plan.experts[0].projection[k].kernel->row_group, 4);
            EXPECT_EQ(plan.experts[1].projection[k].kernel->layout, MEMRA_LAYOUT_GGML) << "in memory, m " << m;
        }
        for (int32_t members : {1, 2, 3, 16}) {
            cut_tiles(plan, members);
            for (const std::vector<Tile> *tiles : {&plan.gate_up_tiles, &plan.down_tiles})
                for (const Tile &t : *tiles) {
                    // Row groups of 4 inside the core's multiple of 16 (the AVX-512 panels' rows):
                    // every tile starts at one and ends at one or at the matrix's end.
                    EXPECT_EQ(t.row_begin % 16, 0) << "a tile starts inside a 16-row panel, m " << m;
                    EXPECT_TRUE(t.row_end % 16 == 0 || t.row_end == 256 || t.row_end == 512)
                        << "a tile ends inside a 16-row panel: " << t.row_end << ", m " << m;
                }
        }
        // The cache off: every call streams, so the bytes stay as they are.
        plan_call(forced(), experts.data(), 2, m, m == 1 ? nullptr : p.input.data(), plan, /*file_cache=*/false);
        for (int32_t k = 0; k < kProjectionKinds; ++k)
            EXPECT_EQ(plan.experts[0].projection[k].kernel->layout, MEMRA_LAYOUT_GGML) << "cache off, m " << m;
    }
    // The prefetcher fills what the token calls will ask for.
    EXPECT_EQ(prefetch_kernel(forced(), MEMRA_QTYPE_Q4_K), &interleaved_kernel(MEMRA_QTYPE_Q4_K, KernelPath::kGemv));
}

TEST_F(Repack, InPiecesEqualsTheWholeMatrixWithAPartialLastGroup) {
    const memra_kernel_v2 &k = interleaved_kernel(MEMRA_QTYPE_Q8_0, KernelPath::kGemm);
    const int32_t n = 1024, rows = 1003;  // 1.1 MB: several pieces; 1003 = 4 * 250 + 3
    const size_t row_bytes = 34 * size_t(n / 32);
    const std::vector<uint8_t> ggml = random_bytes(row_bytes * rows, 7);
    const std::vector<uint8_t> whole = repacked(k, ggml, row_bytes, rows, n);
    ASSERT_NE(whole, ggml) << "the test layout must differ from ggml's";
    std::vector<uint8_t> bytes = ggml;
    repack_in_place(k, bytes.data(), row_bytes, rows, n);
    EXPECT_EQ(bytes, whole);
}

TEST_F(Repack, NoMemoryForTheRepackBufferIsStatus4AndTouchesNothing) {
    const memra_kernel_v2 &k = interleaved_kernel(MEMRA_QTYPE_F32, KernelPath::kGemv);
    uint8_t bytes[16] = {1, 2, 3};
    const uint8_t before[16] = {1, 2, 3};
    // A row of 2^60 bytes: its buffer is beyond any x86-64 address space (2^57 bytes with 5-level
    // paging), so it is refused whatever the overcommit policy (2^45 was granted, untouched, on a
    // host with vm.overcommit_memory=1, and the copy into it crashed); the bytes are looked at
    // only once the buffer is there.
    try {
        repack_in_place(k, bytes, size_t{1} << 60, 1, 1 << 20);
        FAIL() << "no error";
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), MEMRA_STATUS_OUT_OF_MEMORY);
        EXPECT_NE(std::string(e.what()).find("repacks file weights into layout " + std::to_string(k.layout)),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(std::memcmp(bytes, before, sizeof bytes), 0);
}

TEST_F(Repack, EntriesInTheTwoLayoutsOfOneProjectionLiveSideBySide) {
    testkit::TokenProblem p = problem(MEMRA_QTYPE_Q6_K, MEMRA_QTYPE_Q6_K, MEMRA_QTYPE_Q6_K, 512, 256, 2);
    std::vector<CpuExpertV2> experts = p.experts.descriptors();
    const CpuProjectionV2 memory = experts[0].gate;
    const std::vector<uint8_t> ggml(memory.weights, memory.weights + memory.byte_len);
    ProjectionFile file(experts);
    const CpuProjectionV2 &proj = experts[0].gate;
    const memra_kernel_v2 &k = interleaved_kernel(MEMRA_QTYPE_Q6_K, KernelPath::kGemv);
    const std::vector<uint8_t> want = repacked(k, ggml, proj.row_bytes, proj.out_features, proj.in_features);

    Stats counters;
    WeightCache cache(64 << 20, counters);
    AlignedBuffer stream;
    auto fetch = [&](const memra_kernel_v2 *kernel) {
        const uint8_t *bytes = nullptr;
        CallWeights weights(stream, &cache);
        weights.need(proj, 0, kGate, &bytes, kernel);
        weights.resolve();
        return std::make_pair(bytes, std::vector<uint8_t>(bytes, bytes + proj.byte_len));
    };
    const uint64_t misses = stats().cache_misses.load(), hits = stats().cache_hits.load();
    const auto [repacked_at, repacked_bytes] = fetch(&k);
    const auto [ggml_at, ggml_bytes] = fetch(nullptr);
    EXPECT_EQ(repacked_bytes, want) << "the entry of the plugin's layout holds the repacked bytes";
    EXPECT_EQ(ggml_bytes, ggml) << "the entry of ggml's layout holds the file's bytes";
    EXPECT_NE(repacked_at, ggml_at);
    EXPECT_EQ(stats().cache_misses.load() - misses, 2u) << "one read per layout";
    EXPECT_EQ(counters.resident_bytes.load(), 2 * proj.byte_len);
    EXPECT_TRUE(cache.contains(key_of(proj, k.layout)));
    EXPECT_TRUE(cache.contains(key_of(proj, MEMRA_LAYOUT_GGML)));
    // Each layout finds its own again.
    const auto [again_at, again_bytes] = fetch(&k);
    EXPECT_EQ(again_at, repacked_at);
    EXPECT_EQ(again_bytes, want);
    EXPECT_EQ(stats().cache_hits.load() - hits, 1u);
}

// Token calls and rows calls (1, 3 and 6 rows) on `p`'s experts from the file and from memory,
// bit for bit; afterwards the library's cache holds the file's projections repacked only.
void file_equals_memory(testkit::TokenProblem p, const char *what) {
    SCOPED_TRACE(what);
    const std::vector<CpuExpertV2> memory = p.experts.descriptors();
    std::vector<CpuExpertV2> from_file = memory;
    ProjectionFile file(from_file);
    const int32_t n_embd = memory[0].gate.in_features, count = int32_t(memory.size());
    for (int32_t threads : {1, 2}) {
        std::vector<float> want(size_t(n_embd), 0.0f), got(size_t(n_embd), 1.0f);
        moe_token(forced(), memory.data(), count, p.input.data(), want.data(), threads);
        moe_token(forced(), from_file.data(), count, p.input.data(), got.data(), threads);
        EXPECT_TRUE(same_bits(got, want)) << "token call, " << threads << " threads";
        for (int32_t rows : {1, 3, 6}) {
            std::vector<float> inputs(size_t(rows) * size_t(n_embd)), route(static_cast<size_t>(rows));
            for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = p.input[i % p.input.size()] * float(1 + i / p.input.size());
            for (int32_t r = 0; r < rows; ++r) route[size_t(r)] = testkit::rows_route_weight(r);
            std::vector<float> rows_want(inputs.size(), 0.0f), rows_got(inputs.size(), 1.0f);
            expert_rows(forced(), memory[1], inputs.data(), rows, route.data(), rows_want.data(), threads);
            expert_rows(forced(), from_file[1], inputs.data(), rows, route.data(), rows_got.data(), threads);
            EXPECT_TRUE(same_bits(rows_got, rows_want)) << "rows call, " << rows << " rows, " << threads << " threads";
        }
    }
    WeightCache &cache = Library::instance().cache();
    for (const CpuExpertV2 &e : from_file)
        for (const CpuProjectionV2 *proj : {&e.gate, &e.up, &e.down}) {
            const uint32_t layout = interleaved_kernel(proj->qtype, KernelPath::kGemv).layout;
            EXPECT_TRUE(cache.contains(key_of(*proj, layout))) << "no repacked entry";
            EXPECT_FALSE(cache.contains(key_of(*proj, MEMRA_LAYOUT_GGML))) << "an entry in ggml's layout";
        }
}

TEST_F(Repack, FileCallsEqualTheMemoryPathBitForBit) {
    ASSERT_GT(Library::instance().cache().budget(), 0u) << "these calls need the weight cache on";
    file_equals_memory(problem(MEMRA_QTYPE_Q4_K, MEMRA_QTYPE_Q5_K, MEMRA_QTYPE_Q6_K, 512, 256, 3), "k-quants");
    file_equals_memory(problem(MEMRA_QTYPE_Q2_K, MEMRA_QTYPE_IQ3_S, MEMRA_QTYPE_Q4_0, 512, 256, 4), "q2_K iq3_s q4_0");
    file_equals_memory(problem(MEMRA_QTYPE_Q8_0, MEMRA_QTYPE_MXFP4, MEMRA_QTYPE_IQ4_XS, 512, 256, 5), "q8_0 mxfp4 iq4_xs");
    // 37 and 70 rows: the last group of every matrix is partial (1 and 2 rows of 4).
    file_equals_memory(problem(MEMRA_QTYPE_F32, MEMRA_QTYPE_BF16, MEMRA_QTYPE_F32, 70, 37, 6), "f32 bf16, tails");
}

TEST_F(Repack, PrefetchFillsTheRepackedEntryTheCallsFind) {
    testkit::TokenProblem p = problem(MEMRA_QTYPE_Q4_0, MEMRA_QTYPE_Q3_K, MEMRA_QTYPE_BF16, 512, 256, 8);
    std::vector<CpuExpertV2> experts = p.experts.descriptors();
    const std::vector<CpuExpertV2> memory = experts;
    ProjectionFile file(experts);
    std::vector<CpuProjectionV2> projections;
    for (const CpuExpertV2 &e : experts)
        for (const CpuProjectionV2 *proj : {&e.gate, &e.up, &e.down}) projections.push_back(*proj);
    uint64_t bytes = 0;
    for (const CpuProjectionV2 &proj : projections) bytes += proj.byte_len;

    // Never destroyed: the worker is detached (as the library's own prefetcher).
    static Stats counters;
    static WeightCache *cache = new WeightCache(64 << 20, counters);
    static Prefetcher *prefetcher =
        new Prefetcher(*cache, false, [](int32_t qtype) { return prefetch_kernel(forced(), qtype); });
    const uint64_t read_before = stats().read_bytes.load();
    prefetcher->enqueue(projections.data(), int32_t(projections.size()));
    for (int i = 0; i < 2000 && counters.resident_bytes.load() < bytes; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_EQ(counters.resident_bytes.load(), bytes) << "the prefetched bytes never became resident";
    EXPECT_EQ(stats().read_bytes.load() - read_before, bytes);

    // What a token call plans: every projection's entry is found, nothing more is read, and the
    // bytes are the token kernel's layout.
    CallPlan plan;
    plan_call(forced(), experts.data(), int32_t(experts.size()), 1, nullptr, plan, /*file_cache=*/true);
    const uint64_t hits = stats().cache_hits.load(), misses = stats().cache_misses.load();
    const uint64_t read_after = stats().read_bytes.load();
    AlignedBuffer stream;
    CallWeights weights(stream, cache);
    weights.resolve(plan);
    EXPECT_EQ(stats().cache_hits.load() - hits, projections.size());
    EXPECT_EQ(stats().cache_misses.load() - misses, 0u);
    EXPECT_EQ(stats().read_bytes.load(), read_after);
    for (size_t i = 0; i < experts.size(); ++i)
        for (int32_t k = 0; k < kProjectionKinds; ++k) {
            const PlannedProjection &planned = plan.experts[i].projection[k];
            const CpuProjectionV2 *in_memory[kProjectionKinds] = {&memory[i].gate, &memory[i].up, &memory[i].down};
            const CpuProjectionV2 &mem = *in_memory[k];
            const std::vector<uint8_t> ggml(mem.weights, mem.weights + mem.byte_len);
            EXPECT_EQ(std::vector<uint8_t>(planned.weights, planned.weights + mem.byte_len),
                      repacked(*planned.kernel, ggml, mem.row_bytes, mem.out_features, mem.in_features))
                << "expert " << i << " projection " << k;
        }
}

}  // namespace
}  // namespace memra
