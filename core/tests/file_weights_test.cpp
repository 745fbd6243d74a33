// Weights read from a file (CONTRACT.md, "Weights from a file"): the same numbers as from memory,
// the caller's fd left as it was, and read failures reported as status 3.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <ostream>
#include <string>
#include <vector>

#include "lib_call.h"
#include "param_names.h"
#include "rejection.h"
#include "weights_file.h"

namespace memra::tests {
namespace {

// The caller's own file position, which the library must not move.
constexpr off_t kCallerPosition = 7;

testkit::TokenProblem mixed_problem() {
    return testkit::make_token_problem(
        {expertkit::ExpertSpec{MEMRA_QTYPE_Q4_K, MEMRA_QTYPE_IQ4_XS, MEMRA_QTYPE_Q6_K, 1, 1, 1, 0.6f},
         expertkit::ExpertSpec{MEMRA_QTYPE_Q8_0, MEMRA_QTYPE_BF16, MEMRA_QTYPE_NVFP4, 1, 1, 1, -0.4f}},
        512, 256, 61);
}

TEST(FileWeights, SameResultsAsFromMemoryAndTheFdIsLeftAlone) {
    const testkit::TokenProblem p = mixed_problem();
    const std::vector<float> from_memory = run_token(p, 2);
    std::vector<CpuExpertV2> experts = p.experts.descriptors();
    const WeightsFile file(projections_of(experts));
    ASSERT_EQ(lseek(file.fd(), kCallerPosition, SEEK_SET), kCallerPosition);
    for (int call = 0; call < 2; ++call) {  // the second may be served from the cache
        std::vector<float> out(512);
        const CallResult r = call_token(experts.data(), 2, p.input.data(), out.data(), 2);
        ASSERT_EQ(r.status, MEMRA_STATUS_OK) << r.message;
        EXPECT_TRUE(same_bits(out, from_memory)) << "call " << call;
    }
    // Rows too, through the first expert.
    const testkit::RowsProblem rows = testkit::make_rows_problem(
        expertkit::ExpertSpec{MEMRA_QTYPE_Q4_K, MEMRA_QTYPE_IQ4_XS, MEMRA_QTYPE_Q6_K}, 4, 512, 256, 62);
    const std::vector<float> rows_memory = run_rows(rows, 2);
    std::vector<CpuExpertV2> rows_experts = rows.experts.descriptors();
    const WeightsFile rows_file(projections_of(rows_experts));
    std::vector<float> rows_out(4 * 512);
    const CallResult r = call_rows(rows_experts.data(), rows.inputs.data(), 4, rows.route_weights.data(), rows_out.data(), 2);
    ASSERT_EQ(r.status, MEMRA_STATUS_OK) << r.message;
    EXPECT_TRUE(same_bits(rows_out, rows_memory));

    EXPECT_EQ(lseek(file.fd(), 0, SEEK_CUR), kCallerPosition) << "the caller's file offset moved";
    EXPECT_NE(fcntl(file.fd(), F_GETFD), -1) << "the caller's fd was closed";
}

// `weights` is not read when file_fd >= 0: a pointer that would fault if dereferenced.
TEST(FileWeights, WeightsPointerIsIgnored) {
    const testkit::TokenProblem p = mixed_problem();
    const std::vector<float> from_memory = run_token(p, 1);
    std::vector<CpuExpertV2> experts = p.experts.descriptors();
    const WeightsFile file(projections_of(experts));
    for (CpuExpertV2 &e : experts) e.gate.weights = reinterpret_cast<const uint8_t *>(uintptr_t(16));
    std::vector<float> out(512);
    const CallResult r = call_token(experts.data(), 2, p.input.data(), out.data(), 1);
    ASSERT_EQ(r.status, MEMRA_STATUS_OK) << r.message;
    EXPECT_TRUE(same_bits(out, from_memory));
}

// A path on a filesystem that enforces O_DIRECT's alignment (a read at an unaligned offset is
// EINVAL), or "" when none of the usual places does (tmpfs, for one, does not).
std::string direct_io_path() {
    for (const char *dir : {"/var/tmp", "/tmp", "."}) {
        const std::string path = std::string(dir) + "/memra-direct-" + std::to_string(getpid());
        const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0) continue;
        std::vector<char> bytes(16384, 1);
        const bool written = write(fd, bytes.data(), bytes.size()) == ssize_t(bytes.size()) && fsync(fd) == 0;
        close(fd);
        const int direct = written ? open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC) : -1;
        void *aligned = nullptr;
        bool enforced = false;
        if (direct >= 0 && posix_memalign(&aligned, 4096, 8192) == 0) {
            enforced = pread(direct, static_cast<char *>(aligned), 4096, 32) < 0 && errno == EINVAL;
            std::free(aligned);
        }
        if (direct >= 0) close(direct);
        unlink(path.c_str());
        if (enforced) return path;
    }
    return "";
}

// An engine that opens its model with O_DIRECT (to keep it out of the page cache). GGUF offsets are
// only 32-byte aligned (these are deliberately unaligned), and O_DIRECT wants offsets, lengths and
// buffers aligned to the device's blocks: the library reads whole aligned blocks through an aligned
// buffer and copies out what was asked. The results are those of memory, bit for bit, for compute
// calls and prefetch alike, and the caller's descriptor keeps its flag. Before the fix every such
// call was status 3 ("Invalid argument").
TEST(FileWeights, ODirectDescriptorGivesTheSameBits) {
    const std::string path = direct_io_path();
    if (path.empty()) GTEST_SKIP() << "no filesystem here enforces O_DIRECT alignment";
    const testkit::TokenProblem p = mixed_problem();
    const std::vector<float> from_memory = run_token(p, 1);
    const testkit::RowsProblem rows = testkit::make_rows_problem(
        expertkit::ExpertSpec{MEMRA_QTYPE_Q5_K, MEMRA_QTYPE_Q2_K, MEMRA_QTYPE_IQ3_S}, 3, 512, 256, 63);
    const std::vector<float> rows_memory = run_rows(rows, 1);
    std::vector<CpuExpertV2> experts = p.experts.descriptors(), rows_expert = rows.experts.descriptors();
    std::vector<CpuProjectionV2 *> all = projections_of(experts);
    for (CpuProjectionV2 *q : projections_of(rows_expert)) all.push_back(q);
    const WeightsFile file(all, path);
    const int fd = open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    unlink(path.c_str());
    ASSERT_GE(fd, 0);
    for (CpuProjectionV2 *q : all) q->file_fd = fd;
    // The first call reads (a fresh file), the second is served from what it cached.
    for (int call = 0; call < 2; ++call) {
        std::vector<float> out(512);
        const CallResult r = call_token(experts.data(), 2, p.input.data(), out.data(), 2);
        ASSERT_EQ(r.status, MEMRA_STATUS_OK) << r.message;
        EXPECT_TRUE(same_bits(out, from_memory)) << "call " << call;
    }
    // The rows expert through prefetch: the worker reads through its duplicate, which shares the
    // flag; then the call.
    std::vector<CpuProjectionV2> projections;
    for (const CpuProjectionV2 *q : {&rows_expert[0].gate, &rows_expert[0].up, &rows_expert[0].down})
        projections.push_back(*q);
    char error[256] = {};
    ASSERT_EQ(memra_cpu_expert_prefetch_v2(projections.data(), 3, error, sizeof error), MEMRA_STATUS_OK) << error;
    std::vector<float> rows_out(3 * 512);
    const CallResult r = call_rows(rows_expert.data(), rows.inputs.data(), 3, rows.route_weights.data(), rows_out.data(), 2);
    ASSERT_EQ(r.status, MEMRA_STATUS_OK) << r.message;
    EXPECT_TRUE(same_bits(rows_out, rows_memory));
    EXPECT_NE(fcntl(fd, F_GETFL) & O_DIRECT, 0) << "the caller's descriptor lost O_DIRECT";
    close(fd);
}

struct IoCase {
    const char *name;
    void (*breakage)(CpuProjectionV2 &down, const WeightsFile &file);
    const char *errno_text;  // strerror text the message must carry, or nullptr
};

// GoogleTest prints a case by its name (rather than its bytes, in test lists and failures).
void PrintTo(const IoCase &c, std::ostream *os) { *os << c.name; }

class ReadFailure : public ::testing::TestWithParam<IoCase> {};

TEST_P(ReadFailure, IsStatus3AndTheLibraryStaysUsable) {
    const testkit::TokenProblem p = mixed_problem();
    std::vector<CpuExpertV2> experts = p.experts.descriptors();
    const WeightsFile file(projections_of(experts));
    CpuProjectionV2 &down = experts[1].down;
    GetParam().breakage(down, file);
    // The message names the projection and the read: its offset and length, and the errno text
    // where there is one.
    std::vector<std::string> mentions = {"expert 1 down", std::to_string(down.file_offset),
                                         std::to_string(down.byte_len)};
    if (GetParam().errno_text) mentions.emplace_back(GetParam().errno_text);
    std::vector<float> out(512 + 16, -7.0f);
    check_rejection(
        [&](char *error, size_t len) {
            return memra_cpu_moe_token_v2(experts.data(), 2, p.input.data(), out.data(), 2, error, len);
        },
        Rejection{MEMRA_STATUS_IO_ERROR, mentions, -1},
        {{out.data(), out.size() * sizeof(float)}, {p.input.data(), p.input.size() * sizeof(float)}});
    std::vector<float> good(512);
    EXPECT_EQ(call_token(p.experts.data(), 2, p.input.data(), good.data(), 2).status, MEMRA_STATUS_OK);
}

INSTANTIATE_TEST_SUITE_P(
    FileWeights, ReadFailure,
    ::testing::Values(
        // Starts beyond the end of the file.
        IoCase{"PastEndOfFile", [](CpuProjectionV2 &d, const WeightsFile &f) { d.file_offset = f.size() + 1000000; }, nullptr},
        // Starts inside the file but runs past its end: a short read that never completes.
        IoCase{"RunsPastEndOfFile", [](CpuProjectionV2 &d, const WeightsFile &f) { d.file_offset = f.size() - 100; }, nullptr},
        // A descriptor number that is not open.
        IoCase{"BadFd", [](CpuProjectionV2 &d, const WeightsFile &) { d.file_fd = 1000000; }, "bad file descriptor"}),
    case_param_name<IoCase>);

}  // namespace
}  // namespace memra::tests
