#include "weights/direct_read.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "error.h"
#include "weights/io.h"
#include "signals_blocked.h"

namespace memra {
namespace {

// 4096 covers the 512-byte and 4 KiB logical blocks of every common device.
constexpr size_t kAlign = 4096;
// A thread's bounce buffer: one request of a read at queue depth one, or one slot of
// kDirectRequest per member of a split read (so splitting costs no memory).
constexpr size_t kBuffer = size_t{4} << 20;
static_assert(kDirectRequest * kDirectDepth <= kBuffer, "one slot per member");
static_assert(kDirectRequest % kAlign == 0, "requests start aligned");

struct Read {
    int fd, named_fd;
    uint64_t offset;
    size_t length;
    uint8_t *dst;
};

[[noreturn]] void fail_eof(const Read &r, size_t done) {
    fail_read(r.named_fd, r.offset, r.length, "end of file after " + std::to_string(done) + " bytes");
}

// This thread's aligned buffer: mapped at its first direct read, kept (a read per projection
// would otherwise fault fresh memory in every time) and unmapped when it exits.
uint8_t *direct_buffer(const Read &r) {
    struct Buffer {
        void *p = nullptr;
        ~Buffer() {
            if (p) ::munmap(p, kBuffer);
        }
    };
    thread_local Buffer buffer;
    if (!buffer.p) {
        void *mapped = ::mmap(nullptr, kBuffer, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (mapped != MAP_FAILED) buffer.p = mapped;
    }
    if (!buffer.p)
        fail(MEMRA_STATUS_OUT_OF_MEMORY, "out of memory: no aligned buffer for an O_DIRECT read of " +
                                             std::to_string(r.length) + " bytes from fd " + std::to_string(r.named_fd));
    return static_cast<uint8_t *>(buffer.p);
}

// Queue depth one: aligned blocks, kBuffer at a time (a read at the end of the file comes back
// short).
void read_in_turn(const Read &r, size_t done, uint8_t *buffer) {
    while (done < r.length) {
        const uint64_t at = r.offset + done;
        const uint64_t start = at & ~uint64_t{kAlign - 1};
        const size_t skip = size_t(at - start);
        const size_t rest = r.length - done;
        const size_t want = std::min(kBuffer, (skip + rest + kAlign - 1) & ~(kAlign - 1));
        const ssize_t got = ::pread(r.fd, buffer, want, static_cast<off_t>(start));
        if (got < 0) {
            if (errno == EINTR) continue;
            fail_read(r.named_fd, r.offset, r.length, std::strerror(errno));
        }
        if (size_t(got) <= skip) fail_eof(r, done);
        const size_t n = std::min(size_t(got) - skip, rest);
        std::memcpy(r.dst + done, buffer + skip, n);
        done += n;
    }
}

// One read split into requests of kDirectRequest aligned bytes, taken in file order by the
// members (the caller and its helpers), each through its own slot of the caller's buffer.
class SplitRead {
public:
    SplitRead(const Read &r, size_t done, uint8_t *buffer)
        : r_(r), first_(r.offset + done), end_(r.offset + r.length), begin_(first_ & ~uint64_t{kAlign - 1}),
          count_(size_t((end_ - begin_ + kDirectRequest - 1) / kDirectRequest)), buffer_(buffer),
          error_(count_, 0), copied_(count_, 0) {}

    size_t count() const { return count_; }

    void member(int slot) {
        uint8_t *buffer = buffer_ + size_t(slot) * kDirectRequest;
        for (size_t k; !stop_.load(std::memory_order_relaxed) && (k = next_.fetch_add(1)) < count_;)
            if (!request(k, buffer)) stop_.store(true, std::memory_order_relaxed);
    }

    // After every member is done: the first failed request in file order, reported as reading in
    // turn would have met it.
    void report() const {
        for (size_t k = 0; k < count_; ++k) {
            if (error_[k] == 0) continue;
            const size_t before = size_t(std::max(begin_ + k * kDirectRequest, first_) - r_.offset);
            if (error_[k] == kEndOfFile) fail_eof(r_, before + copied_[k]);
            fail_read(r_.named_fd, r_.offset, r_.length, std::strerror(error_[k]));
        }
    }

private:
    static constexpr int kEndOfFile = -1;

    // Request k: its aligned bytes into `buffer` (continuing after short reads, from the block
    // the last one ended in), the wanted ones copied out; false when it failed.
    bool request(size_t k, uint8_t *buffer) {
        const uint64_t a = begin_ + k * kDirectRequest;
        const uint64_t b = std::min(a + kDirectRequest, (end_ + kAlign - 1) & ~uint64_t{kAlign - 1});
        const uint64_t from = std::max(a, first_), to = std::min(b, end_);
        size_t have = 0;  // bytes of [a, b) in the buffer
        while (a + have < to) {
            const size_t at = have & ~(kAlign - 1);
            const ssize_t got = ::pread(r_.fd, buffer + at, size_t(b - a) - at, static_cast<off_t>(a + at));
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) {
                error_[k] = errno;
                return false;
            }
            if (at + size_t(got) <= have) break;  // nothing new: the end of the file
            have = at + size_t(got);
        }
        const uint64_t got_to = std::min(a + have, to);
        if (got_to > from) std::memcpy(r_.dst + (from - r_.offset), buffer + (from - a), size_t(got_to - from));
        if (got_to >= to) return true;
        copied_[k] = got_to > from ? size_t(got_to - from) : 0;
        error_[k] = kEndOfFile;
        return false;
    }

    const Read r_;
    const uint64_t first_, end_, begin_;
    const size_t count_;
    uint8_t *const buffer_;
    std::vector<int> error_;       // per request: 0, an errno, or kEndOfFile
    std::vector<size_t> copied_;   // per request that met the end of the file: its bytes in dst
    std::atomic<size_t> next_{0};
    std::atomic<bool> stop_{false};  // a request failed: the later ones need not be read
};

// Up to `wanted` helper threads running split.member(1..), with every signal blocked (signals
// stay with the engine's threads); fewer when threads cannot be started (the caller's member then
// takes more requests). Joined by the destructor.
class Helpers {
public:
    Helpers(SplitRead &split, int wanted) {
        AllSignalsBlocked blocked;
        try {
            threads_.reserve(size_t(wanted));
            for (int slot = 1; slot <= wanted; ++slot) threads_.emplace_back([&split, slot] { split.member(slot); });
        } catch (const std::system_error &) {  // a thread limit, no memory for a stack
        } catch (const std::bad_alloc &) {
        }
    }
    ~Helpers() {
        for (std::thread &t : threads_) t.join();
    }

private:
    std::vector<std::thread> threads_;
};

}  // namespace

void read_direct(int fd, int named_fd, uint64_t offset, size_t length, uint8_t *dst, size_t done) {
    const Read r{fd, named_fd, offset, length, dst};
    uint8_t *buffer = direct_buffer(r);
    const uint64_t first = offset + done, begin = first & ~uint64_t{kAlign - 1};
    if (done >= length || offset + length - begin <= kDirectRequest) return read_in_turn(r, done, buffer);
    // Without the page cache there is no readahead: requests one at a time leave the device idle
    // between them (docs/file-weights.md, "Direct I/O", measured).
    std::unique_ptr<SplitRead> split;
    try {
        split.reset(new SplitRead(r, done, buffer));
    } catch (const std::bad_alloc &) {
        return read_in_turn(r, done, buffer);
    }
    {
        Helpers helpers(*split, int(std::min<size_t>(kDirectDepth, split->count())) - 1);
        split->member(0);
    }
    split->report();
}

}  // namespace memra
