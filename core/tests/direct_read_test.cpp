// Direct reads above queue depth one (core/weights/direct_read.*): a read of more than one
// request is split into aligned requests read by several threads at once. Every shape of read
// must give the bytes of the file, and every failure the message reading in turn would give:
// the first failure in file order, "end of file after N bytes" with N the bytes delivered.
// Runs read_exact on an O_DIRECT descriptor of a file on a filesystem that enforces alignment;
// faults come from pread_shim (the library's pread resolves to the test's).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "error.h"
#include "pread_shim.h"
#include "weights/direct_read.h"
#include "weights/io.h"

namespace memra {
namespace {

using tests::ArmedPreadFault;
using tests::PreadFault;

constexpr size_t kMiB = size_t{1} << 20;

// A file of `size` random bytes where O_DIRECT's alignment is enforced (a direct read at an
// unaligned offset is EINVAL; tmpfs does not enforce it), open with O_DIRECT; skipped without one.
class DirectFile : public ::testing::Test {
protected:
    void make(size_t size) {
        bytes.resize(size);
        std::mt19937 rng(18);
        for (uint8_t &b : bytes) b = uint8_t(rng());
        for (const char *dir : {"/var/tmp", "/tmp", "."}) {
            path = std::string(dir) + "/memra-direct-read-" + std::to_string(getpid());
            const int w = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
            if (w < 0) continue;
            const bool written = write(w, bytes.data(), size) == ssize_t(size) && fsync(w) == 0;
            close(w);
            fd = written ? open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC) : -1;
            if (fd >= 0 && enforced()) return;
            if (fd >= 0) close(fd);
            fd = -1;
            unlink(path.c_str());
        }
        path.clear();
    }
    bool enforced() const {
        void *aligned = nullptr;
        if (posix_memalign(&aligned, 4096, 8192) != 0) return false;
        const bool einval = pread(fd, aligned, 4096, 32) < 0 && errno == EINVAL;
        std::free(aligned);
        return einval;
    }
    void TearDown() override {
        if (fd >= 0) close(fd);
        if (!path.empty()) unlink(path.c_str());
    }
    // read_exact's message and status, or "" when it succeeded; the bytes checked when it did.
    std::string read(uint64_t offset, size_t length) {
        std::vector<uint8_t> dst(length + 1, 0xee);
        try {
            read_exact(fd, offset, length, dst.data());
        } catch (const Error &e) {
            EXPECT_EQ(e.status(), MEMRA_STATUS_IO_ERROR) << e.what();
            return e.what();
        }
        EXPECT_EQ(std::memcmp(dst.data(), bytes.data() + offset, length), 0) << offset << " + " << length;
        EXPECT_EQ(dst[length], 0xee) << "written past the end";
        return "";
    }
    std::string failure(uint64_t offset, size_t length, const std::string &why) const {
        return read_failure(fd, offset, length, why);
    }

    std::vector<uint8_t> bytes;
    std::string path;
    int fd = -1;
};

#define MAKE_OR_SKIP(size)                                                                   \
    make(size);                                                                              \
    if (fd < 0) GTEST_SKIP() << "no filesystem here enforces O_DIRECT alignment"

TEST_F(DirectFile, EveryShapeOfReadGivesTheFilesBytes) {
    MAKE_OR_SKIP(9 * kMiB + 777);
    // Offsets: aligned, GGUF's 32-byte alignment, just before a block and a request boundary;
    // lengths: one byte, within one request, one request exactly, requests and a tail, the
    // buffer's size and beyond it, up to the file's last byte.
    for (uint64_t offset : {uint64_t{0}, uint64_t{32}, uint64_t{4096 - 32}, uint64_t{kMiB - 32}, uint64_t{3 * kMiB + 96}})
        for (size_t length : {size_t{1}, size_t{4095}, kDirectRequest, kDirectRequest + 32, 3 * kMiB - 64,
                              4 * kMiB + 4064, 5 * kMiB + 7, bytes.size() - offset})
            EXPECT_EQ(read(offset, length), "") << offset << " + " << length;
}

// Short reads (a device that returns less than asked): each request goes on from the block its
// last read ended in.
TEST_F(DirectFile, ShortReadsAreContinued) {
    MAKE_OR_SKIP(6 * kMiB + 100);
    PreadFault f;
    f.kind = PreadFault::Kind::kShortReads;
    f.fd = fd;
    f.max_bytes = 3 * 4096;
    ArmedPreadFault armed(f);
    EXPECT_EQ(read(32, 6 * kMiB), "");
    EXPECT_GT(armed.faults(), 0u);
}

TEST_F(DirectFile, InterruptedReadsAreRetried) {
    MAKE_OR_SKIP(5 * kMiB);
    PreadFault f;
    f.kind = PreadFault::Kind::kEintrStorm;
    f.fd = fd;
    ArmedPreadFault armed(f);
    EXPECT_EQ(read(4064, 5 * kMiB - 8192), "");
    EXPECT_GT(armed.faults(), 0u);
}

// The file ends within the third request of the read: what came before is delivered and counted.
TEST_F(DirectFile, AFileThatEndsMidWayIsEndOfFileAfterTheBytesDelivered) {
    MAKE_OR_SKIP(2 * kMiB + 5000);
    EXPECT_EQ(read(32, 6 * kMiB), failure(32, 6 * kMiB, "end of file after " + std::to_string(2 * kMiB + 5000 - 32) +
                                                            " bytes"));
    // Ending exactly at a request boundary, and a read that begins past the end.
    EXPECT_EQ(read(kMiB, 2 * kMiB), failure(kMiB, 2 * kMiB, "end of file after " + std::to_string(kMiB + 5000) + " bytes"));
    EXPECT_EQ(read(3 * kMiB, 2 * kMiB), failure(3 * kMiB, 2 * kMiB, "end of file after 0 bytes"));
}

// An I/O error in one request of the read fails the read with its errno, also when a later
// request would meet the end of the file: the first failure in file order is the one reported.
TEST_F(DirectFile, AnErrorInOneRequestFailsTheRead) {
    MAKE_OR_SKIP(4 * kMiB + 300);
    PreadFault f;
    f.fd = fd;
    f.error = EIO;
    f.offset = 2 * kMiB + 12345;  // in the third request of a read from 32
    ArmedPreadFault armed(f);
    EXPECT_EQ(read(32, 4 * kMiB), failure(32, 4 * kMiB, std::strerror(EIO)));
    EXPECT_EQ(read(32, 8 * kMiB), failure(32, 8 * kMiB, std::strerror(EIO)));
    EXPECT_GE(armed.faults(), 2u);
    // Reads that do not cover the byte are not affected.
    EXPECT_EQ(read(32, 2 * kMiB), "");
    EXPECT_EQ(read(2 * kMiB + 16384, 2 * kMiB - 16384), "");
}

}  // namespace
}  // namespace memra
