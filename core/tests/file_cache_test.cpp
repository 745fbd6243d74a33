// The weight cache seen through the ABI (CONTRACT.md, "Weights from a file"): file-backed
// weights give the memory results bit for bit in every format, a repeated call is served from
// the cache, a file changed on disk is read again, injected read faults are status 3 or are
// survived, and the budget (MEMRA_CPU_EXPERT_CACHE_BYTES, read at load, so in child processes)
// bounds what stays resident and decides what is evicted.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "child_scenario.h"
#include "formats.h"
#include "lib_call.h"
#include "param_names.h"
#include "pread_shim.h"
#include "weights_file.h"

namespace memra::tests {
namespace {

constexpr int32_t kEmbd = 256, kFf = 256;  // a multiple of every block size (256 for K-quants)

testkit::TokenProblem token_problem(int32_t qtype, uint64_t seed) {
    return testkit::make_token_problem({expertkit::uniform_spec(qtype, 0.7f), expertkit::uniform_spec(qtype, -0.4f)},
                                       kEmbd, kFf, seed);
}

std::vector<float> token_call(const std::vector<CpuExpertV2> &experts, const testkit::TokenProblem &p,
                              int32_t threads = 2) {
    std::vector<float> out(static_cast<size_t>(kEmbd));
    const CallResult r = call_token(experts.data(), int32_t(experts.size()), p.input.data(), out.data(), threads);
    EXPECT_EQ(r.status, MEMRA_STATUS_OK) << r.message;
    return out;
}

std::vector<float> rows_call(const std::vector<CpuExpertV2> &expert, const testkit::RowsProblem &p) {
    std::vector<float> out(size_t(p.rows) * size_t(kEmbd));
    const CallResult r = call_rows(expert.data(), p.inputs.data(), p.rows, p.route_weights.data(), out.data(), 2);
    EXPECT_EQ(r.status, MEMRA_STATUS_OK) << r.message;
    return out;
}

class EveryFormat : public ::testing::TestWithParam<int32_t> {};

// Token and rows calls on file-backed weights equal the memory-backed calls bit for bit; the
// first reads every projection (all misses), the second reads nothing (all hits).
TEST_P(EveryFormat, FileEqualsMemoryAndTheSecondCallIsAllHits) {
    const testkit::TokenProblem token = token_problem(GetParam(), 71);
    const testkit::RowsProblem rows = testkit::make_rows_problem(expertkit::uniform_spec(GetParam()), 3, kEmbd, kFf, 72);
    const std::vector<float> token_memory = run_token(token, 2), rows_memory = run_rows(rows, 2);
    std::vector<CpuExpertV2> token_experts = token.experts.descriptors(), rows_expert = rows.experts.descriptors();
    std::vector<CpuProjectionV2 *> all = projections_of(token_experts);
    for (CpuProjectionV2 *p : projections_of(rows_expert)) all.push_back(p);
    const WeightsFile file(all);

    for (int call = 0; call < 2; ++call) {
        const CacheCounters before = cache_counters();
        EXPECT_TRUE(same_bits(token_call(token_experts, token), token_memory)) << "token call " << call;
        EXPECT_TRUE(same_bits(rows_call(rows_expert, rows), rows_memory)) << "rows call " << call;
        const CacheCounters d = cache_counters() - before;
        if (call == 0) {
            EXPECT_EQ(d[0], 0u) << "hits on a file never read";
            EXPECT_EQ(d[1], 9u) << "misses: 6 token + 3 rows projections";
            EXPECT_EQ(d[2], file.bytes()) << "read_bytes";
            EXPECT_EQ(d[3], file.bytes()) << "resident_bytes grew by what was read";
        } else {
            EXPECT_EQ(d[0], 9u) << "hits";
            EXPECT_EQ(d[1], 0u) << "misses";
            EXPECT_EQ(d[2], 0u) << "read_bytes";
            EXPECT_EQ(d[3], 0u) << "resident_bytes";
        }
    }
}

INSTANTIATE_TEST_SUITE_P(FileCache, EveryFormat, ::testing::ValuesIn(expertkit::all_qtypes()), qtype_param_name);

std::string temp_path(const char *tag) {
    return "/tmp/memra-" + std::string(tag) + "-" + std::to_string(getpid());
}

// A new file renamed over the old path (what a converter or a download does) is another inode:
// a descriptor opened on it reads the new bytes, never the old file's cached ones.
TEST(FileCache, FileReplacedUnderItsPathIsNotServedStale) {
    const std::string path = temp_path("replaced"), staging = path + ".new";
    const testkit::TokenProblem first = token_problem(MEMRA_QTYPE_Q4_K, 81), second = token_problem(MEMRA_QTYPE_Q4_K, 82);
    std::vector<CpuExpertV2> a = first.experts.descriptors(), b = second.experts.descriptors();
    {
        const WeightsFile old_file(projections_of(a), path);
        EXPECT_TRUE(same_bits(token_call(a, first), run_token(first, 2)));
    }
    {
        const WeightsFile staged(projections_of(b), staging);  // same offsets and lengths
        ASSERT_EQ(std::rename(staging.c_str(), path.c_str()), 0) << std::strerror(errno);
    }
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    for (CpuExpertV2 &e : b)
        for (CpuProjectionV2 *p : {&e.gate, &e.up, &e.down}) p->file_fd = fd;
    // The input of the second problem on the second file: the second file's results.
    EXPECT_TRUE(same_bits(token_call(b, second), run_token(second, 2)));
    close(fd);
    unlink(path.c_str());
}

// Writes the bytes of `source`'s experts over the file regions `file_experts` name (the same
// shapes), and moves the file's modification time 10 s on: the kernel's file timestamps are
// coarse (a few ms), and two writes in quick succession can carry the same one; real model files
// are not rewritten within milliseconds of being read.
void rewrite(const WeightsFile &file, std::vector<CpuExpertV2> &file_experts, const testkit::TokenProblem &source) {
    std::vector<CpuExpertV2> from = source.experts.descriptors();
    const std::vector<CpuProjectionV2 *> src = projections_of(from), dst = projections_of(file_experts);
    for (size_t j = 0; j < dst.size(); ++j)
        ASSERT_EQ(pwrite(file.fd(), src[j]->weights, dst[j]->byte_len, off_t(dst[j]->file_offset)), ssize_t(dst[j]->byte_len));
    struct stat st;
    ASSERT_EQ(fstat(file.fd(), &st), 0);
    const struct timespec times[2] = {st.st_atim, {st.st_mtim.tv_sec + 10, st.st_mtim.tv_nsec}};
    ASSERT_EQ(futimens(file.fd(), times), 0);
}

// Rewritten in place: the same inode with other bytes. The file's modification time is part of
// the key, so the rewrite is seen.
TEST(FileCache, FileRewrittenInPlaceIsNotServedStale) {
    const testkit::TokenProblem first = token_problem(MEMRA_QTYPE_Q8_0, 83), second = token_problem(MEMRA_QTYPE_Q8_0, 84);
    std::vector<CpuExpertV2> a = first.experts.descriptors();
    const WeightsFile file(projections_of(a));
    EXPECT_TRUE(same_bits(token_call(a, first), run_token(first, 2)));
    rewrite(file, a, second);
    EXPECT_TRUE(same_bits(token_call(a, second), run_token(second, 2)));
}

// Cut short after the bytes were cached: the file's size is part of the key, so the next call
// reads again and finds the end of the file: status 3, the output untouched, the cached bytes of
// the old file never served. The failed call leaves nothing half-read behind: once the file is
// whole again, the same call gives the right bits.
TEST(FileCache, FileTruncatedAfterCachingIsStatus3) {
    const testkit::TokenProblem p = token_problem(MEMRA_QTYPE_Q6_K, 85);
    std::vector<CpuExpertV2> experts = p.experts.descriptors();
    const WeightsFile file(projections_of(experts));
    const std::vector<float> expected = run_token(p, 2);
    EXPECT_TRUE(same_bits(token_call(experts, p), expected));
    ASSERT_EQ(ftruncate(file.fd(), off_t(experts[1].down.file_offset + 10)), 0);
    std::vector<float> out(size_t(kEmbd), -3.0f);
    for (int call = 0; call < 2; ++call) {  // the second finds what the first left behind
        const CallResult r = call_token(experts.data(), 2, p.input.data(), out.data(), 2);
        EXPECT_EQ(r.status, MEMRA_STATUS_IO_ERROR) << r.message;
        EXPECT_NE(r.message.find("expert 1 down"), std::string::npos) << r.message;
        EXPECT_NE(r.message.find("end of file"), std::string::npos) << r.message;
        EXPECT_EQ(out, std::vector<float>(size_t(kEmbd), -3.0f)) << "output written on failure";
    }
    rewrite(file, experts, p);
    const CacheCounters before = cache_counters();
    EXPECT_TRUE(same_bits(token_call(experts, p), expected)) << "the file whole again";
    EXPECT_TRUE(same_bits(token_call(experts, p), expected)) << "and from the cache";
    EXPECT_EQ((cache_counters() - before)[0], 6u) << "hits: the second call";
}

// Shortened behind its last projection: every byte the call needs is still there, but it is
// another version of the file (the size is part of the key): read again, not served from the
// old entries, and the same bits.
TEST(FileCache, FileTruncatedBehindItsProjectionsIsReadAgain) {
    const testkit::TokenProblem p = token_problem(MEMRA_QTYPE_Q5_K, 88);
    std::vector<CpuExpertV2> experts = p.experts.descriptors();
    const WeightsFile file(projections_of(experts));
    ASSERT_EQ(ftruncate(file.fd(), off_t(file.size() + 8192)), 0);  // a tail nothing reads
    const std::vector<float> expected = run_token(p, 2);
    EXPECT_TRUE(same_bits(token_call(experts, p), expected));
    ASSERT_EQ(ftruncate(file.fd(), off_t(file.size() + 100)), 0);
    const CacheCounters before = cache_counters();
    EXPECT_TRUE(same_bits(token_call(experts, p), expected));
    const CacheCounters d = cache_counters() - before;
    EXPECT_EQ(d[0], 0u) << "hits on the old version";
    EXPECT_EQ(d[1], 6u) << "misses";
}

// EIO in the middle of a projection: status 3 with the errno text, the offset and the length; the
// output is untouched; once the fault is gone the same call succeeds (the failed read left
// nothing behind in the cache).
TEST(FileCache, InjectedReadErrorIsStatus3AndTheNextCallWorks) {
    const testkit::TokenProblem p = token_problem(MEMRA_QTYPE_IQ4_XS, 86);
    std::vector<CpuExpertV2> experts = p.experts.descriptors();
    const WeightsFile file(projections_of(experts));
    const CpuProjectionV2 &victim = experts[1].up;
    std::vector<float> out(size_t(kEmbd), -3.0f);
    {
        const ArmedPreadFault fault({PreadFault::Kind::kFailAt, file.fd(), victim.file_offset + 1000, EIO, 0});
        const CallResult r = call_token(experts.data(), 2, p.input.data(), out.data(), 2);
        EXPECT_EQ(r.status, MEMRA_STATUS_IO_ERROR);
        for (const std::string &m : {std::string("expert 1 up"), std::string(std::strerror(EIO)),
                                     std::to_string(victim.file_offset), std::to_string(victim.byte_len)})
            EXPECT_NE(r.message.find(m), std::string::npos) << "no '" << m << "' in: " << r.message;
        EXPECT_EQ(out, std::vector<float>(size_t(kEmbd), -3.0f)) << "output written on failure";
        EXPECT_GE(fault.faults(), 1u);
    }
    EXPECT_TRUE(same_bits(token_call(experts, p), run_token(p, 2)));
}

// Reads that come back short, and reads interrupted by signals over and over, still deliver
// every byte.
TEST(FileCache, ShortReadsAndEintrStormsGiveTheSameResults) {
    for (PreadFault::Kind kind : {PreadFault::Kind::kShortReads, PreadFault::Kind::kEintrStorm}) {
        const testkit::TokenProblem p = token_problem(MEMRA_QTYPE_Q3_K, 87);
        std::vector<CpuExpertV2> experts = p.experts.descriptors();
        const WeightsFile file(projections_of(experts));  // a fresh file: nothing cached yet
        const ArmedPreadFault fault({kind, file.fd(), 0, 0, 777});
        EXPECT_TRUE(same_bits(token_call(experts, p), run_token(p, 2)));
        EXPECT_GE(fault.faults(), 6u) << "the fault never fired";
    }
}

TEST(FileCache, DescribeLineNamesTheBudgetAndThePrefetchAccount) {
    const std::string line = describe_line();
    EXPECT_NE(line.find("; cache budget "), std::string::npos) << line;
    EXPECT_NE(line.find("; prefetch queued "), std::string::npos) << line;
}

// --- The budget, one process per value -------------------------------------------------------

// Q8_0 256 x 256: 69632 bytes per projection, exactly 17 pages, so each takes one 69632-byte
// chunk and the budgets below are whole numbers of chunks.
constexpr uint64_t kChunk = 69632;

testkit::TokenProblem one_expert(uint64_t seed) {
    return testkit::make_token_problem({expertkit::uniform_spec(MEMRA_QTYPE_Q8_0, 0.9f)}, kEmbd, kFf, seed);
}

MEMRA_CHILD_SCENARIO(BadBudgetFailsEveryCall) {
    const testkit::TokenProblem p = one_expert(91);
    std::vector<float> out(static_cast<size_t>(kEmbd));
    const CallResult token = call_token(p.experts.data(), 1, p.input.data(), out.data(), 1);
    EXPECT_EQ(token.status, MEMRA_STATUS_NO_BACKEND);
    EXPECT_NE(token.message.find("MEMRA_CPU_EXPERT_CACHE_BYTES='12Q'"), std::string::npos) << token.message;
    const float w = 1.0f;
    EXPECT_EQ(call_rows(p.experts.data(), p.input.data(), 1, &w, out.data(), 1).status, MEMRA_STATUS_NO_BACKEND);
    char error[256] = {};
    EXPECT_EQ(memra_cpu_expert_prefetch_v2(&p.experts[0].gate, 1, error, sizeof error), MEMRA_STATUS_NO_BACKEND);
}

TEST(CacheBudget, BadValueFailsEveryCallWithStatus5) {
    expect_child_passes("BadBudgetFailsEveryCall", {{"MEMRA_CPU_EXPERT_CACHE_BYTES", "12Q"}});
}

// Two experts = six chunks; the budget holds two. The call computes correctly anyway: what does
// not fit (everything else being pinned by the call) is streamed.
MEMRA_CHILD_SCENARIO(BudgetSmallerThanOneCall) {
    const testkit::TokenProblem p = token_problem(MEMRA_QTYPE_Q8_0, 92);
    std::vector<CpuExpertV2> experts = p.experts.descriptors();
    const WeightsFile file(projections_of(experts));
    const std::vector<float> expected = run_token(p, 2);
    for (int call = 0; call < 3; ++call) {
        const CacheCounters before = cache_counters();
        EXPECT_TRUE(same_bits(token_call(experts, p), expected)) << "call " << call;
        const CacheCounters d = cache_counters() - before, now = cache_counters();
        EXPECT_EQ(d[0] + d[1], 6u) << "one look-up per projection";
        EXPECT_EQ(d[0], call == 0 ? 0u : 2u) << "hits: the two that fit stay";
        EXPECT_LE(now[3], 2 * kChunk) << "resident_bytes over the budget";
    }
}

TEST(CacheBudget, SmallerThanOneCallStillComputes) {
    expect_child_passes("BudgetSmallerThanOneCall", {{"MEMRA_CPU_EXPERT_CACHE_BYTES", std::to_string(2 * kChunk + 100)}});
}

MEMRA_CHILD_SCENARIO(ZeroBudgetStreams) {
    const testkit::TokenProblem p = token_problem(MEMRA_QTYPE_Q8_0, 93);
    std::vector<CpuExpertV2> experts = p.experts.descriptors();
    const WeightsFile file(projections_of(experts));
    char error[256] = {};
    EXPECT_EQ(memra_cpu_expert_prefetch_v2(&experts[0].gate, 1, error, sizeof error), MEMRA_STATUS_OK) << error;
    for (int call = 0; call < 2; ++call) {
        const CacheCounters before = cache_counters();
        EXPECT_TRUE(same_bits(token_call(experts, p), run_token(p, 2)));
        const CacheCounters d = cache_counters() - before;
        EXPECT_EQ(d[0], 0u) << "hits";
        EXPECT_EQ(d[1], 6u) << "misses";
        EXPECT_EQ(d[2], file.bytes()) << "read_bytes";
    }
    EXPECT_EQ(cache_counters()[3], 0u) << "resident_bytes";
    EXPECT_NE(describe_line().find("; cache budget 0 bytes"), std::string::npos) << describe_line();
}

TEST(CacheBudget, ZeroDisablesCaching) { expect_child_passes("ZeroBudgetStreams", {{"MEMRA_CPU_EXPERT_CACHE_BYTES", "0"}}); }

// Three one-expert problems A, B, C, the budget two experts: after A, B, A the least recently
// used is B, so C evicts B and A stays.
MEMRA_CHILD_SCENARIO(LeastRecentlyUsedGoesFirst) {
    const testkit::TokenProblem a = one_expert(94), b = one_expert(95), c = one_expert(96);
    std::vector<CpuExpertV2> ea = a.experts.descriptors(), eb = b.experts.descriptors(), ec = c.experts.descriptors();
    std::vector<CpuProjectionV2 *> all = projections_of(ea);
    for (auto *set : {&eb, &ec})
        for (CpuProjectionV2 *p : projections_of(*set)) all.push_back(p);
    const WeightsFile file(all);
    auto hits_and_misses = [](const std::vector<CpuExpertV2> &e, const testkit::TokenProblem &p) {
        const CacheCounters before = cache_counters();
        EXPECT_TRUE(same_bits(token_call(e, p), run_token(p, 1)));
        const CacheCounters d = cache_counters() - before;
        return std::to_string(d[0]) + " hits, " + std::to_string(d[1]) + " misses";
    };
    EXPECT_EQ(hits_and_misses(ea, a), "0 hits, 3 misses") << "A";
    EXPECT_EQ(hits_and_misses(eb, b), "0 hits, 3 misses") << "B";
    EXPECT_EQ(hits_and_misses(ea, a), "3 hits, 0 misses") << "A again";
    EXPECT_EQ(hits_and_misses(ec, c), "0 hits, 3 misses") << "C";
    EXPECT_EQ(hits_and_misses(ea, a), "3 hits, 0 misses") << "A, kept";
    EXPECT_EQ(hits_and_misses(eb, b), "0 hits, 3 misses") << "B, evicted";
    EXPECT_LE(cache_counters()[3], 6 * kChunk) << "resident_bytes over the budget";
}

TEST(CacheBudget, EvictsTheLeastRecentlyUsed) {
    expect_child_passes("LeastRecentlyUsedGoesFirst", {{"MEMRA_CPU_EXPERT_CACHE_BYTES", std::to_string(6 * kChunk)}});
}

// MEMRA_CPU_EXPERT_DIRECT_IO=1 (docs/file-weights.md, "Direct I/O"): the library reopens the
// file with O_DIRECT and reads aligned blocks around the (deliberately unaligned) offsets. Whether
// it bypassed the page cache shows in mincore: the file's pages were dropped first, and a buffered
// read brings them back.

// Pages of `fd`'s first `bytes` in the page cache; -1 when that cannot be seen.
long resident_pages(int fd, uint64_t bytes) {
    void *map = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) return -1;
    const size_t pages = (bytes + 4095) / 4096;
    std::vector<unsigned char> in(pages);
    long n = -1;
    if (mincore(map, bytes, in.data()) == 0) {
        n = 0;
        for (unsigned char c : in) n += c & 1;
    }
    munmap(map, bytes);
    return n;
}

// Whether this file can be opened with O_DIRECT at all (tmpfs cannot: the library then reads it
// buffered, as without the variable).
bool direct_capable(int fd) {
    const int direct = open(("/proc/self/fd/" + std::to_string(fd)).c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (direct < 0) return false;
    close(direct);
    return true;
}

MEMRA_CHILD_SCENARIO(DirectIoSameBits) {
    const char *value = std::getenv("MEMRA_CPU_EXPERT_DIRECT_IO");
    const bool direct = value && std::string(value) == "1";
    const testkit::TokenProblem p = token_problem(MEMRA_QTYPE_Q4_K, 111);
    const testkit::RowsProblem rows = testkit::make_rows_problem(expertkit::uniform_spec(MEMRA_QTYPE_IQ3_S), 3, kEmbd, kFf, 112);
    const std::vector<float> expected = run_token(p, 2), rows_expected = run_rows(rows, 2);
    std::vector<CpuExpertV2> experts = p.experts.descriptors(), rows_expert = rows.experts.descriptors();
    std::vector<CpuProjectionV2 *> all = projections_of(experts);
    for (CpuProjectionV2 *q : projections_of(rows_expert)) all.push_back(q);
    const WeightsFile file(all);
    ASSERT_EQ(fdatasync(file.fd()), 0);
    ASSERT_EQ(posix_fadvise(file.fd(), 0, 0, POSIX_FADV_DONTNEED), 0);
    const long before_pages = resident_pages(file.fd(), file.size());
    for (int call = 0; call < 2; ++call) {  // read, then from the cache
        const CacheCounters before = cache_counters();
        EXPECT_TRUE(same_bits(token_call(experts, p), expected)) << "call " << call;
        const CacheCounters d = cache_counters() - before;
        EXPECT_EQ(d[0], call == 0 ? 0u : 6u) << "hits, call " << call;
    }
    // The rows expert through prefetch (the worker reads through its own descriptor), then the call.
    std::vector<CpuProjectionV2> projections{rows_expert[0].gate, rows_expert[0].up, rows_expert[0].down};
    char error[256] = {};
    ASSERT_EQ(memra_cpu_expert_prefetch_v2(projections.data(), 3, error, sizeof error), MEMRA_STATUS_OK) << error;
    EXPECT_TRUE(same_bits(rows_call(rows_expert, rows), rows_expected));
    const long after_pages = resident_pages(file.fd(), file.size());
    if (direct_capable(file.fd()) && before_pages == 0 && after_pages >= 0) {
        if (direct)
            EXPECT_EQ(after_pages, 0) << "direct reads left the file's pages in the page cache";
        else
            EXPECT_GT(after_pages, 0) << "buffered reads did not go through the page cache";
    }
    // A file shortened under the last projection: status 3, end of file, as buffered.
    ASSERT_EQ(ftruncate(file.fd(), off_t(experts[1].down.file_offset + 10)), 0);
    // (another size, so another key: nothing cached serves it)
    std::vector<float> out(size_t(kEmbd), -3.0f);
    const CallResult r = call_token(experts.data(), 2, p.input.data(), out.data(), 2);
    EXPECT_EQ(r.status, MEMRA_STATUS_IO_ERROR) << r.message;
    EXPECT_NE(r.message.find("expert 1 down"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("end of file"), std::string::npos) << r.message;
    EXPECT_EQ(out, std::vector<float>(size_t(kEmbd), -3.0f)) << "output written on failure";
}

TEST(DirectIo, SameBitsAndThePageCacheIsBypassed) {
    expect_child_passes("DirectIoSameBits", {{"MEMRA_CPU_EXPERT_DIRECT_IO", "1"}});
}

TEST(DirectIo, WithoutItReadsAreBuffered) { expect_child_passes("DirectIoSameBits", {{"MEMRA_CPU_EXPERT_DIRECT_IO", "0"}}); }

MEMRA_CHILD_SCENARIO(BadDirectIoFailsEveryCall) {
    const testkit::TokenProblem p = one_expert(114);
    std::vector<float> out(static_cast<size_t>(kEmbd));
    const CallResult token = call_token(p.experts.data(), 1, p.input.data(), out.data(), 1);
    EXPECT_EQ(token.status, MEMRA_STATUS_NO_BACKEND);
    EXPECT_NE(token.message.find("MEMRA_CPU_EXPERT_DIRECT_IO='yes'"), std::string::npos) << token.message;
}

TEST(DirectIo, BadValueFailsEveryCallWithStatus5) {
    expect_child_passes("BadDirectIoFailsEveryCall", {{"MEMRA_CPU_EXPERT_DIRECT_IO", "yes"}});
}

}  // namespace
}  // namespace memra::tests
