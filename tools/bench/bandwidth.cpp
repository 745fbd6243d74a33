#include "bandwidth.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "read_loop.h"
#include "test_file.h"

namespace memra::bench {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Keeps the checksums observable, so the reads cannot be optimised away.
std::atomic<uint64_t> g_sink{0};

}  // namespace

Summary measure_read_bandwidth(const PageBuffer &buffer, int threads, const StopRule &rule) {
    // Slices a multiple of 4 KiB, so every thread's loop gets whole 256-byte steps.
    const size_t slice = buffer.size() / size_t(threads) / 4096 * 4096;
    if (slice == 0) throw std::invalid_argument("bandwidth buffer too small for the thread count");
    read_all(buffer.data(), slice);  // warm-up: TLB, frequency
    return sample_until_stable(rule, [&] {
        const auto t0 = std::chrono::steady_clock::now();
        std::vector<std::thread> team;
        for (int t = 0; t < threads; ++t)
            team.emplace_back([&, t] { g_sink += read_all(buffer.data() + size_t(t) * slice, slice); });
        for (std::thread &th : team) th.join();
        const double s = seconds_since(t0);
        // Report as if the whole buffer was read: the slices may leave a tail of < 4 KiB * threads.
        return s * double(buffer.size()) / double(slice * size_t(threads));
    });
}

Summary measure_cold_pread(const std::string &path, size_t bytes, size_t request, const StopRule &rule) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("open " + path + ": " + std::strerror(errno));
    std::vector<uint8_t> dst(request);
    Summary s;
    try {
        s = sample_until_stable(rule, [&] {
            drop_page_cache(fd);
            const auto t0 = std::chrono::steady_clock::now();
            for (size_t off = 0; off < bytes; off += request)
                pread_exact(fd, dst.data(), std::min(request, bytes - off), off);
            return seconds_since(t0);
        });
    } catch (...) {
        ::close(fd);
        throw;
    }
    ::close(fd);
    return s;
}

}  // namespace memra::bench
