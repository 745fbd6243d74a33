// How one call's team is laid over the NUMA nodes its calling thread may run on (docs/numa.md).
//
// A thread whose affinity mask covers CPUs of one node only, a machine of one node, and
// MEMRA_CPU_EXPERT_NUMA=off give the flat team of today: `groups` is 1 and nothing else here is
// used. Otherwise the team's members are dealt to the nodes in proportion to the CPUs the mask
// allows on each (the caller on the node it runs on), every projection's output rows are split
// between those nodes in proportion to their members (split_rows), and each node's members take
// the tiles of its rows (team.h, run_team_groups).
//
// Cost per call: the sched_getaffinity the flat team already made and a compare of the mask; the
// nodes of a new mask are worked out once (from the machine read at load, never sysfs) and kept
// by the thread until its mask changes.
#pragma once

#include <sched.h>

#include <cstdint>
#include <vector>

namespace memra {

struct NumaMachine;

// The most groups a team spreads over; a thread whose mask spans more nodes runs a flat team.
constexpr int32_t kMaxTeamGroups = 64;

struct TeamLayout {
    int32_t members = 1;     // the caller and its helpers
    int32_t groups = 1;      // nodes with members; 1: the flat team, the fields below unused
    int32_t caller_group = 0;
    const int32_t *group_members = nullptr;  // per group, the caller included in its own
    const cpu_set_t *group_cpus = nullptr;   // per group, the mask's CPUs on that node
    const int32_t *group_node = nullptr;     // per group, its node's index in the thread's view
    const int32_t *group_numa_node = nullptr;  // per group, its node's index in NumaMachine::nodes
    // A team on one node of several (the thread's mask allows CPUs of one node only): that node's
    // index in NumaMachine::nodes, where the call's cache entries are placed; else -1.
    int32_t home_node = -1;
    uint64_t pin_key = 0;    // names the thread's view: (pin_key, node) names a CPU set (team.h)
};

// The team for a call of `threads` threads on the calling thread: at most the CPUs of its mask.
// Starts the helpers a spread team needs (team_helpers), so that rows go only to nodes whose
// members exist. The layout lives in the thread's storage until its next call.
const TeamLayout &layout_team(int32_t threads, const NumaMachine &machine);

// The calling thread's team as its last call laid it out (the flat team of one member before its
// first call): the prefetch hints of an executor thread are placed like its calls' reads.
const TeamLayout &last_team_layout();

// Row boundaries of `out` rows split among `groups` groups in proportion to `members` (each > 0):
// group g gets [bounds[g], bounds[g + 1]), every inner boundary the multiple of `multiple` nearest
// to the exact share, or `out` (bounds[0] = 0, bounds[groups] = out). The same arguments, the same split.
void split_rows(int32_t out, int32_t multiple, const int32_t *members, int32_t groups, int32_t *bounds);

// `helpers` helpers dealt to groups of `capacity` free CPUs each, in proportion to the capacity
// (largest remainders, ties to the lower group), never more than a group's capacity
// (sum(capacity) >= helpers). Writes helpers_per_group.
void deal_helpers(int32_t helpers, const int32_t *capacity, int32_t groups, int32_t *helpers_per_group);

}  // namespace memra
