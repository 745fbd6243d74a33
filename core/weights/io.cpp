#include "weights/io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>
#include <thread>

#include "error.h"
#include "weights/direct_read.h"

namespace memra {
namespace {

constexpr int64_t kSecond = 1000000000;
constexpr int64_t kMillisecond = 1000000;
// How far the coarse clock can lag the moment a change is stamped: one scheduler tick (4 ms at
// HZ=250, 10 ms at HZ=100), with margin.
constexpr int64_t kTick = 20 * kMillisecond;
// How many times a file modified in the current tick is looked at again before the call gives up.
constexpr int kSettleLooks = 4;

int64_t coarse_now() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    return int64_t(ts.tv_sec) * kSecond + ts.tv_nsec;
}

// The granularity a stamp may have been truncated to: whole seconds are taken to come from a
// coarse filesystem (FAT: 2 s); anything else from a fine one (1 ns to 1 us), with a margin.
int64_t stamp_slack(int64_t mtime_ns) { return mtime_ns % kSecond == 0 ? 2 * kSecond : kMillisecond; }

// Seconds and nanoseconds as one count, saturated (a time set past the year 2262 does not wrap).
int64_t to_ns(int64_t seconds, int64_t nanoseconds) {
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / kSecond - 1;
    if (seconds > kMax) return std::numeric_limits<int64_t>::max();
    if (seconds < -kMax) return std::numeric_limits<int64_t>::min();
    return seconds * kSecond + nanoseconds;
}

FileIdentity identity_of(const struct stat &st) {
    FileIdentity id;
    id.dev = static_cast<uint64_t>(st.st_dev);
    id.ino = static_cast<uint64_t>(st.st_ino);
    id.size = static_cast<uint64_t>(st.st_size);
    id.mtime_ns = to_ns(st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    return id;
}

bool is_direct(int fd) {
    const int flags = ::fcntl(fd, F_GETFL);
    return flags >= 0 && (flags & O_DIRECT) != 0;
}

struct Read {
    int fd, named_fd;
    uint64_t offset;
    size_t length;
    uint8_t *dst;
};

[[noreturn]] void fail_errno(const Read &r, int err) { fail_read(r.named_fd, r.offset, r.length, std::strerror(err)); }

[[noreturn]] void fail_eof(const Read &r, size_t done) {
    fail_read(r.named_fd, r.offset, r.length, "end of file after " + std::to_string(done) + " bytes");
}

}  // namespace

std::string read_failure(int fd, uint64_t offset, size_t length, const std::string &why) {
    return "read of " + std::to_string(length) + " bytes at offset " + std::to_string(offset) + " from fd " +
           std::to_string(fd) + " failed: " + why;
}

void fail_read(int fd, uint64_t offset, size_t length, const std::string &why) {
    fail(MEMRA_STATUS_IO_ERROR, read_failure(fd, offset, length, why));
}

void read_exact(int fd, uint64_t offset, size_t length, uint8_t *dst, int named_fd) {
    const Read r{fd, named_fd < 0 ? fd : named_fd, offset, length, dst};
    // Large requests, but below the kernel's per-call cap (about 2 GiB) so one pread never
    // comes back short merely because of its size.
    constexpr size_t kMaxChunk = size_t{1} << 30;
    if (offset > static_cast<uint64_t>(INT64_MAX) - length)
        fail_read(r.named_fd, offset, length, "offset + length overflows the file size range");
    if (length > 0 && is_direct(fd)) return read_direct(fd, r.named_fd, offset, length, dst, 0);
    size_t done = 0;
    while (done < length) {
        const size_t want = std::min(length - done, kMaxChunk);
        const ssize_t got = ::pread(fd, dst + done, want, static_cast<off_t>(offset + done));
        if (got < 0) {
            const int err = errno;
            if (err == EINTR) continue;
            // O_DIRECT belongs to the open file, which the caller (and its other descriptors)
            // may have switched on since: the rest is read aligned.
            if (err == EINVAL && is_direct(fd)) return read_direct(fd, r.named_fd, offset, length, dst, done);
            fail_errno(r, err);
        }
        if (got == 0) fail_eof(r, done);
        done += static_cast<size_t>(got);
    }
}

int reopen_direct(int fd) {
    struct stat before;
    if (::fstat(fd, &before) != 0 || !S_ISREG(before.st_mode)) return -1;
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    int direct;
    do direct = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC | O_NOCTTY);
    while (direct < 0 && errno == EINTR);
    if (direct < 0) return -1;
    struct stat after;
    if (::fstat(direct, &after) != 0 || after.st_dev != before.st_dev || after.st_ino != before.st_ino) {
        ::close(direct);
        return -1;
    }
    return direct;
}

FileIdentity identify_file(int fd, uint64_t offset, size_t length, int named_fd) {
    struct stat st;
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        fail_read(named_fd < 0 ? fd : named_fd, offset, length, std::strerror(err));
    }
    return identity_of(st);
}

FileSnapshot snapshot_file(int fd, uint64_t offset, size_t length, int named_fd) {
    FileSnapshot s;
    s.seen_ns = coarse_now();
    s.id = identify_file(fd, offset, length, named_fd);
    return s;
}

bool settled(const FileSnapshot &s, int64_t now_ns) {
    const int64_t mtime = s.id.mtime_ns, slack = stamp_slack(mtime);
    // Changes after the snapshot are stamped at or after seen_ns (less the granularity).
    if (mtime < s.seen_ns - slack) return true;
    // A stamp ahead of every clock reading up to now: no change made until now can carry it.
    return mtime > now_ns && mtime - now_ns > kTick + slack;
}

FileSnapshot settled_snapshot(int fd, uint64_t offset, size_t length, int named_fd) {
    for (int look = 1;; ++look) {
        const FileSnapshot s = snapshot_file(fd, offset, length, named_fd);
        if (settled(s, s.seen_ns)) return s;
        if (look == kSettleLooks)
            fail_read(named_fd, offset, length, "the file keeps changing (modified again at every look)");
        // Not settled: the stamp is at most a tick and the slack ahead of seen_ns. Wait until the
        // clock is past it (a bounded wait, should the clock be set back meanwhile).
        const int64_t target = s.id.mtime_ns + stamp_slack(s.id.mtime_ns);
        const int64_t longest = 2 * (kTick + stamp_slack(s.id.mtime_ns));
        for (int64_t now = coarse_now(), waited = 0; now <= target && waited < longest;) {
            const int64_t step = std::min<int64_t>(target - now + kMillisecond, 100 * kMillisecond);
            std::this_thread::sleep_for(std::chrono::nanoseconds(step));
            waited += step;
            now = coarse_now();
        }
    }
}

bool unchanged_since(int fd, const FileSnapshot &s) {
    struct stat st;
    if (::fstat(fd, &st) != 0) return false;
    return identity_of(st) == s.id && settled(s, coarse_now());
}

}  // namespace memra
