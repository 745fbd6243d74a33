#include "numa/page_nodes.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <new>
#include <unordered_map>
#include <utility>

namespace memra {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kMaxSampled = size_t{1} << 16;  // a 671B model has ~175k projections: the hot ones stay

struct Kept {
    std::mutex mutex;
    std::unordered_map<const uint8_t *, std::pair<size_t, PageSamples>> samples;
};

Kept &kept() {
    static Kept *k = new Kept;  // never destroyed: helpers may still ask at exit
    return *k;
}

PageSamples ask_kernel(const uint8_t *data, size_t bytes) {
    PageSamples s;
    void *pages[kPageSamples];
    int status[kPageSamples];
    for (int32_t i = 0; i < kPageSamples; ++i) {
        const uintptr_t at = reinterpret_cast<uintptr_t>(data) + bytes / kPageSamples * size_t(i);
        pages[i] = reinterpret_cast<void *>(at & ~uintptr_t{kPage - 1});
        status[i] = -1;
    }
    const bool asked = ::syscall(SYS_move_pages, 0, static_cast<unsigned long>(kPageSamples), pages, nullptr, status, 0) == 0;
    for (int32_t i = 0; i < kPageSamples; ++i) s.node[i] = static_cast<int16_t>(asked && status[i] >= 0 && status[i] < 32768 ? status[i] : -1);
    return s;
}

}  // namespace

PageSamples sample_pages(const uint8_t *data, size_t bytes) {
    Kept &k = kept();
    {
        std::lock_guard<std::mutex> lock(k.mutex);
        auto it = k.samples.find(data);
        if (it != k.samples.end() && it->second.first == bytes) return it->second.second;
    }
    const PageSamples s = ask_kernel(data, bytes);
    std::lock_guard<std::mutex> lock(k.mutex);
    try {
        if (k.samples.size() >= kMaxSampled) k.samples.clear();
        k.samples[data] = {bytes, s};
    } catch (const std::bad_alloc &) {
        // Not kept: asked again next time (only speed depends on it).
    }
    return s;
}

int32_t sampled_node(const PageSamples &samples, size_t bytes, size_t offset) {
    const size_t part = bytes / kPageSamples;
    const size_t i = part ? std::min<size_t>(offset / part, kPageSamples - 1) : 0;
    return samples.node[i];
}

void forget_page_samples() {
    std::lock_guard<std::mutex> lock(kept().mutex);
    kept().samples.clear();
}

}  // namespace memra
