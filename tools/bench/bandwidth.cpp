#include "bandwidth.h"

#include <fcntl.h>
#include <immintrin.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
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

// Threads started once and released together for each sample, so that a sample times the reads,
// not thread creation, and no slice starts late (16 threads created one after the other would
// start up to a millisecond apart). The caller is thread 0; helpers wait between samples, which
// lasts only while one measurement alternates its loops, spinning briefly, then yielding (a
// shared machine may have fewer free cores than threads).
template <class Ready>
void wait_until(const Ready &ready) {
    for (int spins = 0; !ready(); ++spins) {
        if (spins < 1000) _mm_pause();
        else std::this_thread::yield();
    }
}

class ReadTeam {
public:
    explicit ReadTeam(int threads) {
        for (int t = 1; t < threads; ++t) helpers_.emplace_back([this, t] { serve(t); });
    }
    ~ReadTeam() {
        stop_ = true;
        generation_.fetch_add(1);
        for (std::thread &h : helpers_) h.join();
    }
    // Seconds from the release until every thread finished work(thread index).
    double run(const std::function<void(int)> &work) {
        work_ = &work;
        done_ = 0;
        const auto t0 = std::chrono::steady_clock::now();
        generation_.fetch_add(1);
        work(0);
        wait_until([&] { return done_.load() == int(helpers_.size()); });
        return seconds_since(t0);
    }

private:
    void serve(int t) {
        uint64_t seen = 0;
        for (;;) {
            wait_until([&] { return generation_.load() != seen; });
            seen = generation_.load();
            if (stop_) return;
            (*work_)(t);
            done_.fetch_add(1);
        }
    }

    std::vector<std::thread> helpers_;
    const std::function<void(int)> *work_ = nullptr;
    std::atomic<uint64_t> generation_{0};
    std::atomic<int> done_{0};
    std::atomic<bool> stop_{false};
};

}  // namespace

ReadCeiling measure_read_bandwidth(const PageBuffer &buffer, int threads, const StopRule &rule) {
    // Slices a multiple of 4 KiB, as every loop needs.
    const size_t slice = buffer.size() / size_t(threads) / 4096 * 4096;
    if (slice == 0) throw std::invalid_argument("bandwidth buffer too small for the thread count");
    const std::vector<ReadLoop> &loops = read_loops();
    loops.front().read(buffer.data(), slice);  // warm-up: TLB, frequency
    ReadTeam team(threads);
    std::vector<std::function<double()>> contenders;
    for (const ReadLoop &loop : loops)
        contenders.emplace_back([&] {
            const double s = team.run([&](int t) { g_sink += loop.read(buffer.data() + size_t(t) * slice, slice); });
            // Report as if the whole buffer was read: the slices may leave a tail of < 4 KiB * threads.
            return s * double(buffer.size()) / double(slice * size_t(threads));
        });
    const std::vector<Summary> s = sample_alternating(rule, contenders, nullptr);
    ReadCeiling out;
    size_t best = 0;
    for (size_t i = 0; i < loops.size(); ++i) {
        out.loop_medians.emplace_back(loops[i].name, s[i].median);
        if (s[i].median < s[best].median) best = i;
    }
    out.seconds = s[best];
    out.loop = loops[best].name;
    return out;
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
