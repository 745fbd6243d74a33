#include "compute/team_layout.h"

#include <algorithm>
#include <atomic>

#include "compute/team.h"
#include "numa/topology.h"

namespace memra {
namespace {

// Numbers every node view a thread works out: a helper pinned under one view is re-pinned when
// its caller's layout comes from another.
std::atomic<uint64_t> g_view_key{0};

// A calling thread's nodes under its current mask, and the layout of its last call.
struct ThreadTeam {
    bool valid = false;
    cpu_set_t mask;
    std::vector<NodeCpus> nodes;
    uint64_t key = 0;
    std::vector<int32_t> capacity, helpers, members, node, numa_node;
    std::vector<cpu_set_t> cpus;
    TeamLayout layout;
};

ThreadTeam &thread_team() {
    thread_local ThreadTeam t;
    return t;
}

}  // namespace

const TeamLayout &last_team_layout() { return thread_team().layout; }

void split_rows(int32_t out, int32_t multiple, const int32_t *members, int32_t groups, int32_t *bounds) {
    int64_t total = 0;
    for (int32_t g = 0; g < groups; ++g) total += members[g];
    const int64_t step = std::max(multiple, 1);
    bounds[0] = 0;
    int64_t before = 0;
    for (int32_t g = 0; g + 1 < groups; ++g) {
        before += members[g];
        const int64_t exact2 = 2 * int64_t(out) * before / total;  // twice the exact boundary, floored
        int64_t b = (exact2 + step) / (2 * step) * step;           // the nearest multiple
        b = std::clamp<int64_t>(b, bounds[g], out);
        bounds[g + 1] = static_cast<int32_t>(b);
    }
    bounds[groups] = out;
}

void deal_helpers(int32_t helpers, const int32_t *capacity, int32_t groups, int32_t *helpers_per_group) {
    int64_t total = 0;
    for (int32_t g = 0; g < groups; ++g) total += capacity[g];
    int32_t dealt = 0;
    for (int32_t g = 0; g < groups; ++g) {
        helpers_per_group[g] = total ? static_cast<int32_t>(int64_t(helpers) * capacity[g] / total) : 0;
        dealt += helpers_per_group[g];
    }
    // The rest, one each, to the largest remainders (ties: the lower group).
    while (dealt < helpers && total) {
        int32_t best = -1;
        int64_t best_rest = -1;
        for (int32_t g = 0; g < groups; ++g) {
            const int64_t rest = int64_t(helpers) * capacity[g] - int64_t(helpers_per_group[g]) * total;
            if (helpers_per_group[g] < capacity[g] && rest > best_rest) {
                best = g;
                best_rest = rest;
            }
        }
        if (best < 0) break;
        ++helpers_per_group[best];
        ++dealt;
    }
}

const TeamLayout &layout_team(int32_t threads, const NumaMachine &machine) {
    ThreadTeam &t = thread_team();
    TeamLayout &layout = t.layout;
    layout = TeamLayout{};
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof mask, &mask) != 0) {  // as before: no cap from the mask
        layout.members = std::max(1, threads);
        return layout;
    }
    // A team larger than the CPUs it may use only time-slices its members on the same cores, and
    // a member that loses its core holds up the down tiles waiting for its h. (The engine passes
    // threads=8 by default, also on smaller machines.)
    layout.members = std::max(1, std::min(threads, CPU_COUNT(&mask)));
    if (!machine.enabled) return layout;
    if (!t.valid || !CPU_EQUAL(&mask, &t.mask)) {
        t.nodes = node_view(machine, mask);
        t.mask = mask;
        t.key = g_view_key.fetch_add(1, std::memory_order_relaxed) + 1;
        t.valid = true;
    }
    const int32_t nodes = static_cast<int32_t>(t.nodes.size());
    if (nodes == 1) layout.home_node = t.nodes[0].node;  // an executor pinned to its node
    if (layout.members == 1 || nodes < 2 || nodes > kMaxTeamGroups) return layout;

    const int32_t helpers = team_helpers(layout.members - 1);
    if (helpers == 0) {
        layout.members = 1;
        return layout;
    }
    // The caller counts on the node it runs on now (it may move; only speed depends on it).
    const int cpu = sched_getcpu();
    int32_t caller = 0;
    for (int32_t g = 0; g < nodes; ++g)
        if (cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &t.nodes[g].cpus)) caller = g;
    t.capacity.resize(nodes);
    t.helpers.resize(nodes);
    for (int32_t g = 0; g < nodes; ++g) t.capacity[g] = t.nodes[g].count - (g == caller ? 1 : 0);
    deal_helpers(helpers, t.capacity.data(), nodes, t.helpers.data());

    // Only nodes with members form groups.
    t.members.clear();
    t.node.clear();
    t.numa_node.clear();
    t.cpus.clear();
    layout.caller_group = 0;
    for (int32_t g = 0; g < nodes; ++g) {
        const int32_t m = t.helpers[g] + (g == caller ? 1 : 0);
        if (m == 0) continue;
        if (g == caller) layout.caller_group = static_cast<int32_t>(t.members.size());
        t.members.push_back(m);
        t.node.push_back(g);
        t.numa_node.push_back(t.nodes[g].node);
        t.cpus.push_back(t.nodes[g].cpus);
    }
    layout.members = 1 + helpers;
    layout.groups = static_cast<int32_t>(t.members.size());
    layout.group_members = t.members.data();
    layout.group_cpus = t.cpus.data();
    layout.group_node = t.node.data();
    layout.group_numa_node = t.numa_node.data();
    layout.pin_key = t.key;
    return layout;
}

}  // namespace memra
