#include "stats.h"

#include <algorithm>

#include "numa/topology.h"

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

std::string describe_placement(const NumaMachine &machine) {
    const Stats &s = stats();
    std::string line;
    bool any = false;
    const size_t nodes = std::min<size_t>(machine.nodes.size(), kMaxPlacedNodes);
    for (size_t i = 0; i < nodes; ++i) {
        const uint64_t bytes = s.resident_on_node[i].load(std::memory_order_relaxed);
        any = any || bytes != 0;
        line += (i ? ", node " : "; cache placed on node ") + std::to_string(machine.nodes[i].id) + " " +
                std::to_string(bytes) + " bytes";
    }
    return any || placement_on(machine) ? line : std::string();
}

}  // namespace memra
