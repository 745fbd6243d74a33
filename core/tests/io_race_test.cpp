// File-backed weights while the caller's descriptors and files change under the library
// (docs/file-weights.md, "Reads"; docs/hardening.md, "The host process"): a descriptor number
// swapped onto another file during calls and prefetches never gets that file's bytes cached under
// the first file's identity; a file changed during a read is read again or is status 3, never
// status 0 with a mix of its versions; and at the descriptor limit calls still compute.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "eventually.h"
#include "lib_call.h"
#include "pread_shim.h"
#include "weights_file.h"

namespace memra::tests {
namespace {

constexpr int32_t kEmbd = 256, kFf = 256;

std::vector<expertkit::ExpertSpec> specs() {
    return {expertkit::ExpertSpec{MEMRA_QTYPE_Q4_K, MEMRA_QTYPE_Q8_0, MEMRA_QTYPE_Q6_K, 1, 1, 1, 0.6f},
            expertkit::ExpertSpec{MEMRA_QTYPE_IQ4_XS, MEMRA_QTYPE_Q4_0, MEMRA_QTYPE_Q5_K, 1, 1, 1, -0.4f}};
}

std::vector<CpuProjectionV2> flat(const std::vector<CpuExpertV2> &experts) {
    std::vector<CpuProjectionV2> out;
    for (const CpuExpertV2 &e : experts)
        for (const CpuProjectionV2 *p : {&e.gate, &e.up, &e.down}) out.push_back(*p);
    return out;
}

int32_t prefetch(const std::vector<CpuExpertV2> &experts) {
    const std::vector<CpuProjectionV2> projections = flat(experts);
    char error[256] = {};
    return memra_cpu_expert_prefetch_v2(projections.data(), int32_t(projections.size()), error, sizeof error);
}

void point_at(std::vector<CpuExpertV2> &experts, int fd) {
    for (CpuProjectionV2 *p : projections_of(experts)) p->file_fd = fd;
}

// Experts whose weights are in a file of their own (same layout for every seed: the same specs).
struct FileProblem {
    explicit FileProblem(uint64_t seed)
        : p(testkit::make_token_problem(specs(), kEmbd, kFf, seed)),
          experts(p.experts.descriptors()),
          file(projections_of(experts)) {}
    testkit::TokenProblem p;
    std::vector<CpuExpertV2> experts;
    WeightsFile file;
};

// The memory-backed result of `weights`' experts on `input`.
std::vector<float> expected(const FileProblem &weights, const std::vector<float> &input) {
    std::vector<float> out(static_cast<size_t>(kEmbd));
    const CallResult r = call_token(weights.p.experts.data(), 2, input.data(), out.data(), 1);
    EXPECT_EQ(r.status, MEMRA_STATUS_OK) << r.message;
    return out;
}

CallResult token(const std::vector<CpuExpertV2> &experts, const std::vector<float> &input, std::vector<float> &out,
                 int32_t threads) {
    out.assign(size_t(kEmbd), -7.0f);
    return call_token(experts.data(), int32_t(experts.size()), input.data(), out.data(), threads);
}

// The caller keeps swapping two files (same layout, other bytes) onto one descriptor number
// (dup2) while calls and prefetches on that number run. A call may see either file, but all of it
// from one file; and afterwards each file, through a descriptor of its own, gives its own bits:
// nothing was cached under a file's identity that came from the other. Before the fix the library
// identified the file through the number and read through it after the swap: the other file's
// bytes were cached under the first's key (a few of the later checks failed in every run).
TEST(IoRace, DescriptorSwappedDuringCallsNeverCachesTheOtherFilesBytes) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(4);
    std::vector<std::unique_ptr<FileProblem>> keep;  // files stay open: no inode number is reused
    int rounds = 0, mixed = 0, poisoned = 0, failed = 0;
    for (; rounds < 40 && std::chrono::steady_clock::now() < deadline; ++rounds) {
        keep.push_back(std::make_unique<FileProblem>(1000 + 2 * uint64_t(rounds)));
        keep.push_back(std::make_unique<FileProblem>(1001 + 2 * uint64_t(rounds)));
        const FileProblem &a = *keep[keep.size() - 2], &b = *keep.back();
        const std::vector<float> &input = a.p.input;
        const std::vector<float> a_bits = expected(a, input), b_bits = expected(b, input);
        const int number = dup(a.file.fd());
        ASSERT_GE(number, 0);
        std::vector<CpuExpertV2> through = a.experts;
        point_at(through, number);
        std::atomic<bool> stop{false};
        std::thread swapper([&] {
            while (!stop.load(std::memory_order_relaxed)) {
                dup2(b.file.fd(), number);
                dup2(a.file.fd(), number);
            }
        });
        std::vector<float> out;
        for (int call = 0; call < 4; ++call) {
            if (call % 2 == 0) prefetch(through);
            const CallResult r = token(through, input, out, 1 + call % 2);
            if (r.status != MEMRA_STATUS_OK) {
                ++failed;
                ADD_FAILURE() << "round " << rounds << " call " << call << ": " << r.message;
            } else if (!same_bits(out, a_bits) && !same_bits(out, b_bits)) {
                ++mixed;
            }
        }
        stop = true;
        swapper.join();
        close(number);
        // Each file through its own fd: found in the cache under its own identity, or read.
        if (!same_bits((token(a.experts, input, out, 1), out), a_bits)) ++poisoned;
        if (!same_bits((token(b.experts, input, out, 2), out), b_bits)) ++poisoned;
    }
    std::printf("%d rounds: %d mixed results, %d later calls served another file's bytes\n", rounds, mixed, poisoned);
    EXPECT_EQ(poisoned, 0) << "bytes cached under a file they did not come from";
    EXPECT_EQ(mixed, 0) << "calls that mixed the two files' projections";
    EXPECT_EQ(failed, 0);
}

// Writes the bytes of `from`'s experts over the file regions of `to` (the same layout): the
// file now holds another version, with a new modification time.
struct Rewrite {
    const FileProblem *to;
    const FileProblem *versions[2];
    int next = 0;  // which version the next change writes
};

void rewrite_file(void *context) {
    Rewrite &r = *static_cast<Rewrite *>(context);
    const std::vector<CpuProjectionV2> from = flat(r.versions[r.next]->p.experts.descriptors());
    const std::vector<CpuProjectionV2> where = flat(r.to->experts);
    for (size_t j = 0; j < where.size(); ++j)
        if (pwrite(r.to->file.fd(), from[j].weights, where[j].byte_len, off_t(where[j].file_offset)) !=
            ssize_t(where[j].byte_len))
            std::abort();
    r.next ^= 1;
}

// The file is rewritten in place (another version of the same size) in the middle of a read of
// the call: the first half of that read came from the old version, the rest and every later read
// from the new one (pread_shim's kChangeMidRead makes the tear happen every time). The library
// sees the file changed (its modification time) and reads again: the new version's bits. Before
// the fix the call returned status 0 with a mix of the two versions. (A file in use being
// truncated and rewritten by another process did the same: about one call in 300-900 returned
// status 0 with page-aligned runs of zeros.)
TEST(IoRace, FileChangedDuringAReadIsReadAgain) {
    FileProblem f(2001), b(2002);
    const std::vector<float> b_bits = expected(b, f.p.input);
    Rewrite rewrite{&f, {&b, &f}};
    const CacheCounters before = cache_counters();
    std::vector<float> out;
    CallResult r;
    {
        ArmedPreadFault tear({PreadFault::Kind::kChangeMidRead, f.file.fd(), 0, 0, 0, 0, &rewrite_file, &rewrite, 1});
        r = token(f.experts, f.p.input, out, 2);
        EXPECT_EQ(tear.faults(), 1u);
    }
    ASSERT_EQ(r.status, MEMRA_STATUS_OK) << r.message;
    EXPECT_TRUE(same_bits(out, b_bits)) << "the call computed with bytes of two versions of the file";
    // What is cached is the new version, under its own identity: the next call is all hits.
    const CacheCounters first = cache_counters();
    EXPECT_EQ((first - before)[0] + (first - before)[1], 6u) << "one look-up per projection (the start over is not counted)";
    EXPECT_TRUE(same_bits((token(f.experts, f.p.input, out, 1), out), b_bits));
    EXPECT_EQ((cache_counters() - first)[0], 6u) << "hits";
}

// The file changes during every read (a writer that never stops): after starting over once the
// call is status 3, "file changed during read", naming the projection, with the output untouched;
// once the file is left alone the next call computes. Before the fix: status 0, mixed versions.
TEST(IoRace, FileChangingDuringEveryReadIsStatus3) {
    FileProblem f(2101), b(2102);
    Rewrite rewrite{&f, {&b, &f}};
    std::vector<float> out;
    CallResult r;
    {
        ArmedPreadFault tear({PreadFault::Kind::kChangeMidRead, f.file.fd(), 0, 0, 0, 0, &rewrite_file, &rewrite, 0});
        r = token(f.experts, f.p.input, out, 2);
    }
    EXPECT_EQ(r.status, MEMRA_STATUS_IO_ERROR) << r.message;
    for (const char *m : {"expert 0 gate", "file changed during read"})
        EXPECT_NE(r.message.find(m), std::string::npos) << "no '" << m << "' in: " << r.message;
    EXPECT_EQ(out, std::vector<float>(size_t(kEmbd), -7.0f)) << "output written on failure";
    // The file was left holding one version or the other (the last change wrote `next ^ 1`).
    const FileProblem &now = rewrite.next == 1 ? b : f;
    const CallResult again = token(f.experts, f.p.input, out, 2);
    EXPECT_EQ(again.status, MEMRA_STATUS_OK) << again.message;
    EXPECT_TRUE(same_bits(out, expected(now, f.p.input)));
}

// The prefetch worker's read is torn by a change: nothing it read is published under the old
// version's identity (the first read fails its check, the others find another file than the one
// queued), and the compute call reads the new version. Before the fix the worker published all
// six projections, the torn one included, under the old identity.
TEST(IoRace, PrefetchReadTornByAChangeIsNotCached) {
    FileProblem f(2201), b(2202);
    const std::vector<float> b_bits = expected(b, f.p.input);
    Rewrite rewrite{&f, {&b, &f}};
    const CacheCounters before = cache_counters();
    const uint64_t failed = prefetch_count("failed"), queued = prefetch_count("queued"),
                   skipped = prefetch_count("skipped");
    {
        ArmedPreadFault tear({PreadFault::Kind::kChangeMidRead, f.file.fd(), 0, 0, 0, 0, &rewrite_file, &rewrite, 1});
        ASSERT_EQ(prefetch(f.experts), MEMRA_STATUS_OK);
        ASSERT_EQ(prefetch_count("queued") - queued, 6u);
        // Every job ends one way or another: published (before the fix), or failed or skipped.
        ASSERT_TRUE(eventually([&] {
            return (cache_counters() - before)[3] == f.file.bytes() ||
                   prefetch_count("failed") - failed + prefetch_count("skipped") - skipped >= 6;
        }));
        EXPECT_EQ(tear.faults(), 1u);
    }
    EXPECT_EQ((cache_counters() - before)[3], 0u) << "resident_bytes: bytes published under the old identity";
    EXPECT_EQ(prefetch_count("failed") - failed, 6u);
    std::vector<float> out;
    const CallResult r = token(f.experts, f.p.input, out, 2);
    EXPECT_EQ(r.status, MEMRA_STATUS_OK) << r.message;
    EXPECT_TRUE(same_bits(out, b_bits));
}

// At the descriptor limit the library cannot duplicate the caller's fd to read through: the call
// still computes, reading through the caller's fd and checking the file before and after, and
// caches nothing of it (a descriptor it does not own could be swapped under it).
TEST(IoRace, AtTheDescriptorLimitCallsStillComputeAndCacheNothing) {
    FileProblem f(3001);
    const std::vector<float> bits = expected(f, f.p.input);
    rlimit old{};
    ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
    rlimit tight = old;
    tight.rlim_cur = std::min<rlim_t>(old.rlim_cur, rlim_t(f.file.fd()) + 64);
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &tight), 0);
    std::vector<int> fillers;
    for (int fd; (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) fillers.push_back(fd);
    const CacheCounters before = cache_counters();
    std::vector<float> out;
    CallResult r[2];
    for (int call = 0; call < 2; ++call) r[call] = token(f.experts, f.p.input, out, 2);
    const CacheCounters d = cache_counters() - before;
    const bool same = same_bits(out, bits);
    for (int fd : fillers) close(fd);
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
    for (const CallResult &c : r) EXPECT_EQ(c.status, MEMRA_STATUS_OK) << c.message;
    EXPECT_TRUE(same);
    EXPECT_EQ(d[1], 12u) << "misses: every projection read, twice";
    EXPECT_EQ(d[3], 0u) << "resident_bytes: nothing cached";
    // With descriptors to spare again: cached as usual.
    for (int call = 0; call < 2; ++call) {
        const CallResult c = token(f.experts, f.p.input, out, 2);
        EXPECT_EQ(c.status, MEMRA_STATUS_OK) << c.message;
        EXPECT_TRUE(same_bits(out, bits));
    }
    EXPECT_EQ((cache_counters() - before)[3], f.file.bytes()) << "resident_bytes";
}

}  // namespace
}  // namespace memra::tests
