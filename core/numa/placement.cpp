#include "numa/placement.h"

#include <linux/mempolicy.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "numa/topology.h"

namespace memra {
namespace {

constexpr size_t kPage = 4096;

long real_mbind(void *addr, unsigned long len, int mode, const unsigned long *nodemask, unsigned long maxnode,
                unsigned flags) {
    return ::syscall(SYS_mbind, addr, len, mode, nodemask, maxnode, flags);
}

std::atomic<MbindFn> g_mbind{real_mbind};
std::atomic<bool> g_refused{false};          // mbind refused once: placement is off
std::atomic<bool> g_logged_no_memory{false};  // a node without usable memory was said

void say(const char *what, int32_t node_id, int error) {
    if (error)
        std::fprintf(stderr, "memra-cpu-experts: numa: %s (node %d: %s); the cache's memory lands where the kernel puts it\n",
                     what, node_id, std::strerror(error));
    else
        std::fprintf(stderr, "memra-cpu-experts: numa: %s (node %d); its rows land where the kernel puts them\n", what,
                     node_id);
}

}  // namespace

void set_mbind_for_tests(MbindFn fn) {
    g_mbind.store(fn ? fn : real_mbind);
    g_refused.store(false);
    g_logged_no_memory.store(false);
}

bool placement_on(const NumaMachine &machine) {
    return machine.enabled && machine.memory_policy == 0 && !g_refused.load(std::memory_order_relaxed);
}

bool place_pages(const NumaMachine &machine, uint8_t *data, size_t bytes, int32_t node, bool log) {
    if (bytes == 0 || !placement_on(machine) || node < 0 || node >= kMaxPlacedNodes ||
        node >= static_cast<int32_t>(machine.nodes.size()))
        return false;
    const NumaNode &n = machine.nodes[static_cast<size_t>(node)];
    // mbind's mask holds real nodes below 64 here (a fake node's memory is its first CPU's node).
    if (n.memory_bytes == 0 || !n.memory_allowed || n.memory_node < 0 || n.memory_node >= 64) {
        if (!g_logged_no_memory.exchange(true) && log) say("a node without memory this process may use", n.id, 0);
        return false;
    }
    const unsigned long mask = 1ul << n.memory_node;
    // maxnode counts one more than the mask's bits (the kernel drops the last one).
    if (g_mbind.load(std::memory_order_relaxed)(data, bytes, MPOL_PREFERRED, &mask, 8 * sizeof mask + 1, MPOL_MF_MOVE) == 0)
        return true;
    const int error = errno;
    if (!g_refused.exchange(true) && log) say("mbind refused, memory placement off", n.id, error);
    return false;
}

void place_rows(const NumaMachine &machine, uint8_t *data, size_t chunk_bytes, size_t row_bytes, const int32_t *bounds,
                const int32_t *nodes, int32_t groups, uint64_t *bytes_on_node, bool log) {
    // A page goes to the group whose rows it starts in: group g's pages begin at the first page
    // boundary at or after its first byte (group 0 at the chunk's start).
    auto first_page = [&](int32_t g) -> size_t {
        if (g == 0) return 0;
        if (g == groups) return chunk_bytes;
        const size_t at = static_cast<size_t>(bounds[g]) * row_bytes;
        return std::min(chunk_bytes, (at + kPage - 1) / kPage * kPage);
    };
    for (int32_t g = 0; g < groups; ++g) {
        const size_t begin = first_page(g), end = first_page(g + 1);
        if (end <= begin) continue;
        if (place_pages(machine, data + begin, end - begin, nodes[g], log) && nodes[g] >= 0 && nodes[g] < kMaxPlacedNodes)
            bytes_on_node[nodes[g]] += end - begin;
    }
}

void place_matrix(const NumaMachine &machine, uint8_t *data, size_t chunk_bytes, size_t row_bytes,
                  const int32_t *bounds, const int32_t *nodes, int32_t groups, int32_t home_node,
                  uint64_t *bytes_on_node, bool log) {
    if (groups > 1)
        place_rows(machine, data, chunk_bytes, row_bytes, bounds, nodes, groups, bytes_on_node, log);
    else if (home_node >= 0 && home_node < kMaxPlacedNodes && place_pages(machine, data, chunk_bytes, home_node, log))
        bytes_on_node[home_node] += chunk_bytes;
}

int32_t page_node(const void *addr) {
    void *page = reinterpret_cast<void *>(reinterpret_cast<uintptr_t>(addr) & ~uintptr_t{kPage - 1});
    int status = -1;
    if (::syscall(SYS_move_pages, 0, 1UL, &page, nullptr, &status, 0) != 0) return -errno;
    return status;  // the node, or -errno for this page
}

}  // namespace memra
