#include "stats.h"

namespace memra {

Stats &stats() {
    static Stats s;  // constant-initialised atomics: no construction order to worry about
    return s;
}

std::string describe_cache(uint64_t budget) {
    const Stats &s = stats();
    auto n = [](const std::atomic<uint64_t> &c) { return std::to_string(c.load(std::memory_order_relaxed)); };
    return "; cache budget " + std::to_string(budget) + " bytes; prefetch queued " + n(s.prefetch_queued) +
           " dropped " + n(s.prefetch_dropped) + " skipped " + n(s.prefetch_skipped) + " failed " +
           n(s.prefetch_failed);
}

}  // namespace memra
