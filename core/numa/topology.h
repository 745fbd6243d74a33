// The machine's NUMA nodes as this process may use them (docs/numa.md): which CPUs and how much
// memory each node has, which memory nodes the process may allocate on, and the facts that
// decide what the library does with them (MEMRA_CPU_EXPERT_NUMA, a memory policy the process set,
// automatic NUMA balancing). Read once, at load (sysfs and /proc are never read on a call's
// path); a calling thread's own view, its affinity mask intersected with the nodes, is
// node_view(), recomputed from this when that mask changes (compute/team_layout.h).
//
// Raw system calls (get_mempolicy through syscall()), not libnuma: the library needs one call
// here and parses sysfs itself anyway, to honour the test override below and to intersect the
// nodes with the calling thread's mask, so libnuma would add a runtime dependency for nothing.
//
// The test override MEMRA_CPU_EXPERT_NUMA_TOPOLOGY ("0:0;1:1", "0:0-3;1:4-7": fake node id, ':',
// its CPUs as a sysfs cpulist, nodes separated by ';') replaces the sysfs nodes, so that every
// multi-node path runs on a one-node machine. A fake node's memory is the real node that holds its
// first CPU (on a one-node machine: node 0), the node memory placed "on the fake node" really lands
// on, and the one move_pages reports for it.
#pragma once

#include <sched.h>

#include <cstdint>
#include <string>
#include <vector>

namespace memra {

struct NumaNode {
    int32_t id = 0;              // as sysfs numbers it (nodeN), or the fake node's number
    std::vector<int32_t> cpus;   // every CPU of the node, ascending (before any affinity mask)
    int32_t memory_node = -1;    // the real node holding its memory (itself, unless fake)
    uint64_t memory_bytes = 0;   // MemTotal of memory_node; 0: a node without memory
    bool memory_allowed = true;  // memory_node is in the process's Mems_allowed
};

struct NumaMachine {
    std::vector<NumaNode> nodes;  // ascending id; a node without CPUs is left out
    bool fake = false;            // from MEMRA_CPU_EXPERT_NUMA_TOPOLOGY
    bool numa_on = true;          // MEMRA_CPU_EXPERT_NUMA is not off
    bool enabled = false;         // numa_on and more than one node
    bool balancing = false;       // /proc/sys/kernel/numa_balancing is on: pages move behind our back
    int32_t memory_policy = 0;    // this process's policy (get_mempolicy's mode; 0 = MPOL_DEFAULT)
    std::vector<std::string> notes;  // what was read and what it means, for the load log

    // The index in `nodes` of the node holding `cpu`, or -1.
    int32_t node_of_cpu(int32_t cpu) const;
};

// "0-3,8,10-11" (a sysfs cpulist; "" is the empty list) to ascending, distinct numbers; false for
// anything else (numbers beyond 65535 included).
bool parse_cpu_list(const std::string &text, std::vector<int32_t> &out);

// The same list written back, ranges folded: {0,1,2,5} -> "0-2,5".
std::string format_cpu_list(const std::vector<int32_t> &cpus);

// MEMRA_CPU_EXPERT_NUMA_TOPOLOGY's value ("0:0;1:1") to nodes (cpus only); false with `error`
// naming the part at fault for anything malformed, a node or a CPU given twice included.
bool parse_fake_topology(const std::string &text, std::vector<NumaNode> &nodes, std::string &error);

// Where read_numa_machine looks: the roots of sysfs and procfs (tests point them at fake trees).
struct NumaSources {
    std::string sys = "/sys";
    std::string proc = "/proc";
    std::string fake_topology;  // MEMRA_CPU_EXPERT_NUMA_TOPOLOGY ("" = not set)
    bool numa_on = true;        // MEMRA_CPU_EXPERT_NUMA is not off
};

// The machine as `sources` describe it; never fails (a machine sysfs does not describe is one
// node holding every CPU: today's behaviour). The memory policy is asked of the kernel only when
// `sources.proc` is "/proc", the real process.
NumaMachine read_numa_machine(const NumaSources &sources);

// What the library does with the nodes, one line (the load log and memra-cpu-info say it).
std::string numa_action(const NumaMachine &machine);
// Said when the process set a memory policy of its own (memory_policy != 0).
std::string numa_policy_note(const NumaMachine &machine);
// Said when automatic NUMA balancing is on and the library spreads teams.
std::string numa_balancing_warning();

// One node as a calling thread sees it: the CPUs of its mask on that node.
struct NodeCpus {
    int32_t node = 0;  // index in NumaMachine::nodes
    cpu_set_t cpus;    // the node's CPUs in the mask
    int32_t count = 0;
};

// The nodes holding at least one CPU of `mask`, in node order (a node with none is not there: a
// team never places anyone on it).
std::vector<NodeCpus> node_view(const NumaMachine &machine, const cpu_set_t &mask);

}  // namespace memra
