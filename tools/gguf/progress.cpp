#include "progress.h"

#include <unistd.h>

#include <cstdio>

namespace memra::gguf_tool {

Progress::Progress(std::string label, uint64_t total, int enabled)
    : label_(std::move(label)), total_(total ? total : 1), on_(enabled < 0 ? ::isatty(2) != 0 : enabled != 0) {}

Progress::~Progress() {
    if (on_ && last_percent_ >= 0) std::fputc('\n', stderr);
}

void Progress::update(uint64_t done) {
    if (!on_) return;
    const int percent = int(done * 100 / total_);
    if (percent == last_percent_) return;  // redraw at most 101 times
    last_percent_ = percent;
    constexpr int kWidth = 30;
    const int filled = percent * kWidth / 100;
    std::fprintf(stderr, "\r%s [%.*s%*s] %3d%% (%llu/%llu)", label_.c_str(), filled,
                 "##############################", kWidth - filled, "", percent, (unsigned long long)done,
                 (unsigned long long)total_);
    std::fflush(stderr);
}

}  // namespace memra::gguf_tool
