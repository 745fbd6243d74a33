// memra_cpu_expert_prefetch_v2 (CONTRACT.md, "Weights from a file"): it returns at once, a
// background worker reads the file-backed projections into the cache, and the compute call that
// follows is served from it; the caller may close its fd right away; the queue is bounded and
// counts what it drops; and calls from several threads mixing every path give the serial results.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "eventually.h"
#include "lib_call.h"
#include "weights_file.h"

namespace memra::tests {
namespace {

constexpr int32_t kEmbd = 512, kFf = 256;

testkit::TokenProblem mixed_problem(uint64_t seed) {
    return testkit::make_token_problem(
        {expertkit::ExpertSpec{MEMRA_QTYPE_Q4_K, MEMRA_QTYPE_Q5_K, MEMRA_QTYPE_Q6_K, 1, 1, 1, 0.6f},
         expertkit::ExpertSpec{MEMRA_QTYPE_Q2_K, MEMRA_QTYPE_IQ3_S, MEMRA_QTYPE_Q4_0, 1, 1, 1, -0.4f}},
        kEmbd, kFf, seed);
}

std::vector<CpuProjectionV2> flat(const std::vector<CpuExpertV2> &experts) {
    std::vector<CpuProjectionV2> out;
    for (const CpuExpertV2 &e : experts)
        for (const CpuProjectionV2 *p : {&e.gate, &e.up, &e.down}) out.push_back(*p);
    return out;
}

int32_t prefetch(const std::vector<CpuProjectionV2> &projections, std::string *message = nullptr) {
    char error[512] = {};
    const int32_t status = memra_cpu_expert_prefetch_v2(projections.data(), int32_t(projections.size()), error, sizeof error);
    if (message) *message = error;
    return status;
}

void point_at(std::vector<CpuExpertV2> &experts, int fd) {
    for (CpuProjectionV2 *p : projections_of(experts)) p->file_fd = fd;
}

std::vector<float> token_call(const std::vector<CpuExpertV2> &experts, const testkit::TokenProblem &p, int32_t threads = 2) {
    std::vector<float> out(static_cast<size_t>(kEmbd));
    const CallResult r = call_token(experts.data(), int32_t(experts.size()), p.input.data(), out.data(), threads);
    EXPECT_EQ(r.status, MEMRA_STATUS_OK) << r.message;
    return out;
}

// A mixed problem whose experts read their weights from a file of their own.
struct FileProblem {
    explicit FileProblem(uint64_t seed, const std::string &path = "")
        : p(mixed_problem(seed)), experts(p.experts.descriptors()), file(projections_of(experts), path) {}
    testkit::TokenProblem p;
    std::vector<CpuExpertV2> experts;
    WeightsFile file;
};

TEST(Prefetch, ThenComputeIsAllHits) {
    FileProblem f(101);
    const CacheCounters before = cache_counters();
    ASSERT_EQ(prefetch(flat(f.experts)), MEMRA_STATUS_OK);
    ASSERT_TRUE(eventually([&] { return (cache_counters() - before)[3] == f.file.bytes(); }))
        << "the prefetched bytes never became resident";
    const CacheCounters prefetched = cache_counters();
    EXPECT_EQ((prefetched - before)[2], f.file.bytes()) << "read_bytes counts the prefetch's reads";
    EXPECT_EQ((prefetched - before)[0] + (prefetched - before)[1], 0u) << "prefetch is no look-up";
    EXPECT_TRUE(same_bits(token_call(f.experts, f.p), run_token(f.p, 2)));
    const CacheCounters d = cache_counters() - prefetched;
    EXPECT_EQ(d[0], 6u) << "hits";
    EXPECT_EQ(d[1], 0u) << "misses";
    EXPECT_EQ(d[2], 0u) << "read_bytes";
    // Prefetching what is resident reads nothing more.
    ASSERT_EQ(prefetch(flat(f.experts)), MEMRA_STATUS_OK);
    EXPECT_EQ(cache_counters()[2], prefetched[2] + d[2]);
}

// A compute call right behind its prefetch either finds the bytes or waits for the worker's read
// in flight: each projection is read once, whichever way the race goes.
TEST(Prefetch, ComputeRightBehindThePrefetchReadsEachProjectionOnce) {
    FileProblem f(102);
    const CacheCounters before = cache_counters();
    ASSERT_EQ(prefetch(flat(f.experts)), MEMRA_STATUS_OK);
    EXPECT_TRUE(same_bits(token_call(f.experts, f.p), run_token(f.p, 2)));
    ASSERT_TRUE(eventually([&] { return (cache_counters() - before)[3] == f.file.bytes(); }));
    const CacheCounters d = cache_counters() - before;
    EXPECT_EQ(d[2], f.file.bytes()) << "read_bytes: every projection exactly once";
    EXPECT_EQ(d[0] + d[1], 6u) << "one look-up per projection";
}

// The prefetch keeps its own duplicate of the fd: the caller closes its fd at once, and a later
// call through another fd on the same file (keyed by the file, not the fd) finds the bytes.
TEST(Prefetch, CallerMayCloseItsFdRightAfterPrefetch) {
    const std::string path = "/tmp/memra-prefetch-" + std::to_string(getpid());
    FileProblem f(103, path);
    const CacheCounters before = cache_counters();
    ASSERT_EQ(prefetch(flat(f.experts)), MEMRA_STATUS_OK);
    f.file.close_fd();
    ASSERT_TRUE(eventually([&] { return (cache_counters() - before)[3] == f.file.bytes(); }));
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    unlink(path.c_str());
    ASSERT_GE(fd, 0);
    point_at(f.experts, fd);
    const CacheCounters ready = cache_counters();
    EXPECT_TRUE(same_bits(token_call(f.experts, f.p), run_token(f.p, 2)));
    EXPECT_EQ((cache_counters() - ready)[0], 6u) << "hits";
    close(fd);
}

// The caller closes its fd after the prefetch and then computes with the same descriptors, the
// closed fd number in them. The library cannot tell which file a closed number meant (the cache
// is keyed by the file, never by the number, and a number is reused by the next open), so the
// call is status 3 before it looks anything up, and the output is untouched. What the prefetch
// read stays resident, and serves the next call through any fd of that file.
TEST(Prefetch, ComputeWithTheClosedFdIsStatus3AndThePrefetchedBytesStay) {
    const std::string path = "/tmp/memra-prefetch-closed-" + std::to_string(getpid());
    FileProblem f(110, path);
    const int closed = f.file.fd();
    const CacheCounters before = cache_counters();
    ASSERT_EQ(prefetch(flat(f.experts)), MEMRA_STATUS_OK);
    f.file.close_fd();
    ASSERT_TRUE(eventually([&] { return (cache_counters() - before)[3] == f.file.bytes(); }));
    std::vector<float> out(static_cast<size_t>(kEmbd), -9.0f);
    const CallResult r = call_token(f.experts.data(), 2, f.p.input.data(), out.data(), 2);
    EXPECT_EQ(r.status, MEMRA_STATUS_IO_ERROR) << r.message;
    for (const std::string &m : {std::string("expert 0 gate"), std::string("fd ") + std::to_string(closed),
                                 std::string("Bad file descriptor")})
        EXPECT_NE(r.message.find(m), std::string::npos) << "no '" << m << "' in: " << r.message;
    EXPECT_EQ(out, std::vector<float>(static_cast<size_t>(kEmbd), -9.0f)) << "output written on failure";
    const CacheCounters failed = cache_counters();
    EXPECT_EQ((failed - before)[2], f.file.bytes()) << "read_bytes: the prefetch's reads only";
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    unlink(path.c_str());
    ASSERT_GE(fd, 0);
    point_at(f.experts, fd);
    EXPECT_TRUE(same_bits(token_call(f.experts, f.p), run_token(f.p, 2)));
    const CacheCounters d = cache_counters() - failed;
    EXPECT_EQ(d[0], 6u) << "hits: the prefetched entries survived the failed call";
    EXPECT_EQ(d[2], 0u) << "read_bytes";
    close(fd);
}

// The closed number is reused for another file before the compute call (the same layout, other
// bytes): the call reads that file, never the first file's prefetched bytes.
TEST(Prefetch, AClosedFdNumberReusedForAnotherFileReadsThatFile) {
    FileProblem first(111), second(112);
    const CacheCounters before = cache_counters();
    ASSERT_EQ(prefetch(flat(first.experts)), MEMRA_STATUS_OK);
    ASSERT_TRUE(eventually([&] { return (cache_counters() - before)[3] == first.file.bytes(); }));
    const int number = first.file.fd();
    ASSERT_EQ(dup2(second.file.fd(), number), number);  // closes the caller's fd of the first file
    std::vector<CpuExpertV2> experts = second.experts;
    point_at(experts, number);
    const CacheCounters reused = cache_counters();
    EXPECT_TRUE(same_bits(token_call(experts, second.p), run_token(second.p, 2)));
    EXPECT_EQ((cache_counters() - reused)[0], 0u) << "hits: the first file's entries were served";
}

// The file is cut short right after the prefetch, before or while the worker reads it: the
// worker's reads past the new end fail (counted; the compute call is the one that reports), and
// the compute call, which sees the new size (another key), reads for itself: status 3, the output
// untouched, and no call waits forever on a read that was abandoned.
TEST(Prefetch, FileTruncatedBehindThePrefetchIsStatus3) {
    FileProblem f(113);
    ASSERT_EQ(prefetch(flat(f.experts)), MEMRA_STATUS_OK);
    ASSERT_EQ(ftruncate(f.file.fd(), off_t(f.experts[1].gate.file_offset + 100)), 0);
    std::vector<float> out(static_cast<size_t>(kEmbd), -9.0f);
    for (int call = 0; call < 2; ++call) {
        const CallResult r = call_token(f.experts.data(), 2, f.p.input.data(), out.data(), 2);
        EXPECT_EQ(r.status, MEMRA_STATUS_IO_ERROR) << r.message;
        EXPECT_NE(r.message.find("expert 1 gate"), std::string::npos) << r.message;
        EXPECT_NE(r.message.find("end of file"), std::string::npos) << r.message;
        EXPECT_EQ(out, std::vector<float>(static_cast<size_t>(kEmbd), -9.0f)) << "output written on failure";
    }
    EXPECT_TRUE(same_bits(token_call(f.p.experts.descriptors(), f.p), run_token(f.p, 1))) << "the next valid call";
}

TEST(Prefetch, AnFdThatIsNotOpenIsStatus3AndNothingIsQueued) {
    FileProblem f(104);
    std::vector<CpuProjectionV2> projections = flat(f.experts);
    projections[4].file_fd = 1000000;
    const CacheCounters before = cache_counters();
    std::string message;
    EXPECT_EQ(prefetch(projections, &message), MEMRA_STATUS_IO_ERROR);
    EXPECT_NE(message.find("projection 4"), std::string::npos) << message;
    EXPECT_NE(message.find("Bad file descriptor"), std::string::npos) << message;
    // Nothing was read: a compute call afterwards reads all six itself.
    EXPECT_TRUE(same_bits(token_call(f.experts, f.p), run_token(f.p, 2)));
    EXPECT_EQ((cache_counters() - before)[1], 6u) << "misses";
}

// More projections than the queue holds, in one call: the surplus is dropped and counted.
TEST(Prefetch, TheQueueIsBoundedAndCountsWhatItDrops) {
    constexpr int32_t kCount = 1500;  // the queue holds 1024
    expertkit::ExpertSet set(kEmbd, kFf);
    std::mt19937_64 rng(105);
    std::vector<CpuProjectionV2> projections;
    for (int32_t i = 0; i < kCount; ++i) projections.push_back(set.make_projection(MEMRA_QTYPE_F32, 1, 32, 1.0f, rng));
    std::vector<CpuProjectionV2 *> pointers;
    for (CpuProjectionV2 &p : projections) pointers.push_back(&p);
    const WeightsFile file(pointers);
    const uint64_t dropped = prefetch_count("dropped"), queued = prefetch_count("queued");
    ASSERT_EQ(prefetch(projections), MEMRA_STATUS_OK);
    const uint64_t now_dropped = prefetch_count("dropped") - dropped, now_queued = prefetch_count("queued") - queued;
    EXPECT_GE(now_dropped, uint64_t(kCount - 1024)) << describe_line();
    EXPECT_EQ(now_dropped + now_queued, uint64_t(kCount)) << describe_line();
}

// Four engine threads, fifty calls each, mixing memory and file weights, token and rows calls,
// and prefetches of what the next call needs: every result equals the serial one.
TEST(Prefetch, ConcurrentCallsMixingEveryPathEqualTheSerialResults) {
    const testkit::TokenProblem memory = mixed_problem(106), from_file = mixed_problem(107), prefetched = mixed_problem(108);
    const testkit::RowsProblem rows = testkit::make_rows_problem(
        expertkit::ExpertSpec{MEMRA_QTYPE_Q8_0, MEMRA_QTYPE_BF16, MEMRA_QTYPE_NVFP4}, 5, kEmbd, kFf, 109);
    const std::vector<float> want_memory = run_token(memory, 1), want_file = run_token(from_file, 1),
                             want_prefetched = run_token(prefetched, 1), want_rows = run_rows(rows, 1);
    std::vector<CpuExpertV2> file_experts = from_file.experts.descriptors(), prefetch_experts = prefetched.experts.descriptors(),
                             rows_expert = rows.experts.descriptors();
    std::vector<CpuProjectionV2 *> all = projections_of(file_experts);
    for (auto *set : {&prefetch_experts, &rows_expert})
        for (CpuProjectionV2 *p : projections_of(*set)) all.push_back(p);
    const WeightsFile file(all);
    const std::vector<CpuProjectionV2> to_prefetch = flat(prefetch_experts);

    std::vector<std::string> failures(4);
    auto engine_thread = [&](int t) {
        for (int call = 0; call < 50 && failures[size_t(t)].empty(); ++call) {
            const int32_t threads = 1 + (call + t) % 2;
            std::vector<float> out(static_cast<size_t>(kEmbd)), rows_out(size_t(rows.rows) * kEmbd);
            CallResult r;
            const std::vector<float> *want = nullptr;
            switch ((call + t) % 4) {
            case 0:
                r = call_token(memory.experts.data(), 2, memory.input.data(), out.data(), threads);
                want = &want_memory;
                break;
            case 1:
                r = call_token(file_experts.data(), 2, from_file.input.data(), out.data(), threads);
                want = &want_file;
                break;
            case 2: {
                char error[256] = {};
                if (memra_cpu_expert_prefetch_v2(to_prefetch.data(), int32_t(to_prefetch.size()), error, sizeof error) != 0)
                    failures[size_t(t)] = std::string("prefetch: ") + error;
                r = call_token(prefetch_experts.data(), 2, prefetched.input.data(), out.data(), threads);
                want = &want_prefetched;
                break;
            }
            case 3:
                r = call_rows(rows_expert.data(), rows.inputs.data(), rows.rows, rows.route_weights.data(), rows_out.data(), threads);
                out = rows_out;
                want = &want_rows;
                break;
            }
            if (r.status != MEMRA_STATUS_OK)
                failures[size_t(t)] = "call " + std::to_string(call) + ": status " + std::to_string(r.status) + ": " + r.message;
            else if (!same_bits(out, *want))
                failures[size_t(t)] = "call " + std::to_string(call) + ": result differs from the serial one";
        }
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) threads.emplace_back(engine_thread, t);
    for (std::thread &th : threads) th.join();
    for (int t = 0; t < 4; ++t) EXPECT_EQ(failures[size_t(t)], "") << "engine thread " << t;
}

}  // namespace
}  // namespace memra::tests
