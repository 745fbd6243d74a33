// O_DIRECT reads of one file region at a given queue depth, two ways: positioned reads from a
// small pool of threads (what core/weights/io.cpp does), and io_uring from the calling thread;
// both through aligned bounce buffers with the bytes copied out, as the library reads. It decided
// whether the library takes liburing as a dependency (docs/file-weights.md, "Direct I/O"): only
// if io_uring measured faster than the pool at the same depth. Not built by CMake (it would make
// liburing a build dependency for one measurement); build and run by hand:
//
//   g++ -O2 -std=c++17 -pthread tools/bench/io-depth/direct_read_depth.cpp -luring -o /tmp/direct_read_depth
//   /tmp/direct_read_depth FILE MiB_PER_READ REQUEST_KiB ROUNDS   (e.g. /var/tmp/big.bin 64 1024 20)
//
// Each round reads a region not read before (the file must hold ROUNDS x MiB_PER_READ), so that a
// cache below the guest (the host's) serves no round twice; the depths and both ways alternate.
#include <fcntl.h>
#include <liburing.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kAlign = 4096;

uint8_t *aligned(size_t n) {
    void *p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mmap");
    return static_cast<uint8_t *>(p);
}

// Reads [offset, offset + length) (offset 32-byte aligned, like a GGUF tensor) into dst.
double pool_read(int fd, uint64_t offset, size_t length, uint8_t *dst, size_t request, int depth,
                 std::vector<uint8_t *> &buffers) {
    const uint64_t begin = offset & ~uint64_t(kAlign - 1);
    const uint64_t end = (offset + length + kAlign - 1) & ~uint64_t(kAlign - 1);
    const size_t count = size_t((end - begin + request - 1) / request);
    std::atomic<size_t> next{0};
    auto member = [&](int m) {
        for (size_t k; (k = next.fetch_add(1)) < count;) {
            const uint64_t a = begin + k * request, b = std::min<uint64_t>(end, a + request);
            size_t have = 0;
            while (have < b - a) {
                const ssize_t got = ::pread(fd, buffers[m] + have, b - a - have, off_t(a + have));
                if (got <= 0) throw std::runtime_error("pread");
                have += size_t(got);
            }
            const uint64_t from = std::max<uint64_t>(a, offset), to = std::min<uint64_t>(b, offset + length);
            std::memcpy(dst + (from - offset), buffers[m] + (from - a), to - from);
        }
    };
    const auto t0 = Clock::now();
    std::vector<std::thread> helpers;
    for (int m = 1; m < depth; ++m) helpers.emplace_back(member, m);
    member(0);
    for (std::thread &h : helpers) h.join();
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

double uring_read(io_uring &ring, int fd, uint64_t offset, size_t length, uint8_t *dst, size_t request, int depth,
                  std::vector<uint8_t *> &buffers) {
    const uint64_t begin = offset & ~uint64_t(kAlign - 1);
    const uint64_t end = (offset + length + kAlign - 1) & ~uint64_t(kAlign - 1);
    const size_t count = size_t((end - begin + request - 1) / request);
    const auto t0 = Clock::now();
    size_t issued = 0, done = 0;
    std::vector<size_t> slot_request(depth);
    auto issue = [&](int slot) {
        const uint64_t a = begin + issued * request, b = std::min<uint64_t>(end, a + request);
        io_uring_sqe *sqe = io_uring_get_sqe(&ring);
        io_uring_prep_read(sqe, fd, buffers[slot], unsigned(b - a), a);
        io_uring_sqe_set_data64(sqe, uint64_t(slot));
        slot_request[slot] = issued++;
    };
    for (int s = 0; s < depth && issued < count; ++s) issue(s);
    io_uring_submit(&ring);
    while (done < count) {
        io_uring_cqe *cqe;
        if (io_uring_wait_cqe(&ring, &cqe) != 0) throw std::runtime_error("wait_cqe");
        const int slot = int(io_uring_cqe_get_data64(cqe));
        const uint64_t a = begin + slot_request[slot] * request, b = std::min<uint64_t>(end, a + request);
        if (cqe->res != int(b - a)) throw std::runtime_error("short io_uring read: " + std::to_string(cqe->res));
        io_uring_cqe_seen(&ring, cqe);
        const uint64_t from = std::max<uint64_t>(a, offset), to = std::min<uint64_t>(b, offset + length);
        std::memcpy(dst + (from - offset), buffers[slot] + (from - a), to - from);
        ++done;
        if (issued < count) {
            issue(slot);
            io_uring_submit(&ring);
        }
    }
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: %s FILE MiB_PER_READ REQUEST_KiB ROUNDS\n", argv[0]);
        return 2;
    }
    const size_t length = size_t(std::atol(argv[2])) << 20, request = size_t(std::atol(argv[3])) << 10;
    const int rounds = std::atoi(argv[4]);
    const int fd = ::open(argv[1], O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (fd < 0) return std::perror("open O_DIRECT"), 1;
    const int depths[] = {1, 2, 4, 8};
    std::vector<uint8_t *> buffers;
    for (int i = 0; i < 8; ++i) buffers.push_back(aligned(request));
    uint8_t *dst = aligned(length);
    io_uring ring;
    const int setup = io_uring_queue_init(8, &ring, 0);
    if (setup < 0) std::fprintf(stderr, "io_uring_queue_init: %s (pool only)\n", std::strerror(-setup));
    std::vector<double> pool_s[4], uring_s[4];
    uint64_t at = 32;  // GGUF-like: 32-byte aligned, not block aligned
    for (int r = 0; r < rounds; ++r)
        for (int d = 0; d < 4; ++d) {
            pool_s[d].push_back(pool_read(fd, at, length, dst, request, depths[d], buffers));
            at += length + 32;
            if (setup < 0) continue;
            uring_s[d].push_back(uring_read(ring, fd, at, length, dst, request, depths[d], buffers));
            at += length + 32;
        }
    auto median = [](std::vector<double> v) {
        if (v.empty()) return 0.0;
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    std::printf("O_DIRECT, %zu MiB per read, %zu KiB requests, %d rounds alternating, median GB/s\n", length >> 20,
                request >> 10, rounds);
    std::printf("depth  pool-pread  io_uring  uring/pool\n");
    for (int d = 0; d < 4; ++d) {
        const double p = double(length) / median(pool_s[d]) / 1e9;
        const double u = uring_s[d].empty() ? 0 : double(length) / median(uring_s[d]) / 1e9;
        std::printf("%5d  %10.2f  %8.2f  %9.2f\n", depths[d], p, u, p > 0 ? u / p : 0);
    }
    return 0;
}
