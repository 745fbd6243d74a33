// The NUMA pieces on their own (docs/numa.md): the cpulist and override parsers, the machine read
// from fake sysfs and procfs trees, a thread's view of it under an affinity mask.
#include <gtest/gtest.h>

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <numeric>
#include <set>
#include <vector>

#include "numa/topology.h"

namespace memra {
namespace {

namespace fs = std::filesystem;

TEST(NumaCpuList, ParsesSysfsLists) {
    std::vector<int32_t> cpus;
    ASSERT_TRUE(parse_cpu_list("0-3,8,10-11", cpus));
    EXPECT_EQ(cpus, (std::vector<int32_t>{0, 1, 2, 3, 8, 10, 11}));
    ASSERT_TRUE(parse_cpu_list("", cpus));
    EXPECT_TRUE(cpus.empty());
    ASSERT_TRUE(parse_cpu_list("5,1,1", cpus));
    EXPECT_EQ(cpus, (std::vector<int32_t>{1, 5}));
    for (const char *bad : {"a", "1-", "-1", "3-1", "1,,2", "1,", "1 2", "70000", "0-99999"})
        EXPECT_FALSE(parse_cpu_list(bad, cpus)) << bad;
    EXPECT_EQ(format_cpu_list({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
    EXPECT_EQ(format_cpu_list({}), "");
}

TEST(NumaFakeTopology, ParsesNodesAndRefusesWhatIsMalformed) {
    std::vector<NumaNode> nodes;
    std::string error;
    ASSERT_TRUE(parse_fake_topology("1:1;0:0", nodes, error)) << error;
    ASSERT_EQ(nodes.size(), 2u);
    EXPECT_EQ(nodes[0].id, 0);
    EXPECT_EQ(nodes[0].cpus, std::vector<int32_t>{0});
    EXPECT_EQ(nodes[1].id, 1);
    ASSERT_TRUE(parse_fake_topology("0:0-3;1:4-7", nodes, error)) << error;
    EXPECT_EQ(nodes[1].cpus, (std::vector<int32_t>{4, 5, 6, 7}));
    const std::pair<const char *, const char *> bad[] = {
        {"", "expected"},      {"0:0;", "expected"},       {"0", "NODE:CPULIST"}, {":0", "NODE:CPULIST"},
        {"0:", "NODE:CPULIST"}, {"x:0", "NODE:CPULIST"},   {"0:0;0:1", "node 0 is given twice"},
        {"0:0-1;1:1", "CPU 1 is in two nodes"},            {"0:0-", "NODE:CPULIST"}};
    for (const auto &[text, why] : bad) {
        error.clear();
        EXPECT_FALSE(parse_fake_topology(text, nodes, error)) << text;
        EXPECT_NE(error.find(why), std::string::npos) << text << ": " << error;
    }
}

// A sysfs and procfs tree of a machine, written to a temporary directory.
struct FakeTree {
    fs::path root;
    FakeTree() {
        char dir[] = "/tmp/memra-numa-XXXXXX";
        root = ::mkdtemp(dir);
    }
    ~FakeTree() { fs::remove_all(root); }
    void write(const std::string &path, const std::string &text) const {
        fs::create_directories((root / path).parent_path());
        std::ofstream(root / path) << text << "\n";
    }
    // A node: its cpulist and MemTotal in kB.
    void node(int id, const std::string &cpus, uint64_t kib) const {
        const std::string dir = "sys/devices/system/node/node" + std::to_string(id);
        write(dir + "/cpulist", cpus);
        write(dir + "/meminfo", "Node " + std::to_string(id) + " MemTotal:       " + std::to_string(kib) +
                                     " kB\nNode " + std::to_string(id) + " MemFree:        1 kB");
    }
    NumaSources sources(const std::string &fake = "", bool on = true) const {
        NumaSources s;
        s.sys = (root / "sys").string();
        s.proc = (root / "proc").string();
        s.fake_topology = fake;
        s.numa_on = on;
        return s;
    }
};

// Two sockets of 4 CPUs and a third node of memory only (CXL); the cpuset allows nodes 0 and 2.
FakeTree two_sockets(const std::string &balancing) {
    FakeTree t;
    t.write("sys/devices/system/node/online", "0-2");
    t.node(0, "0-3", 1024 * 1024);
    t.node(1, "4-7", 2048 * 1024);
    t.node(2, "", 512 * 1024);
    t.write("proc/self/status", "Name:\tx\nMems_allowed:\t00000005\nMems_allowed_list:\t0,2\nVoluntary:\t1");
    t.write("proc/sys/kernel/numa_balancing", balancing);
    return t;
}

bool mentions(const NumaMachine &m, const std::string &text) {
    for (const std::string &n : m.notes)
        if (n.find(text) != std::string::npos) return true;
    return false;
}

TEST(NumaMachine, ReadsNodesMemoryAndWhatTheProcessMayUse) {
    const FakeTree t = two_sockets("1");
    const NumaMachine m = read_numa_machine(t.sources());
    ASSERT_EQ(m.nodes.size(), 2u) << "the node without CPUs is left out";
    EXPECT_EQ(m.nodes[0].cpus, (std::vector<int32_t>{0, 1, 2, 3}));
    EXPECT_EQ(m.nodes[0].memory_bytes, uint64_t{1} << 30);
    EXPECT_TRUE(m.nodes[0].memory_allowed);
    EXPECT_EQ(m.nodes[1].id, 1);
    EXPECT_EQ(m.nodes[1].memory_node, 1);
    EXPECT_EQ(m.nodes[1].memory_bytes, uint64_t{2} << 30);
    EXPECT_FALSE(m.nodes[1].memory_allowed) << "Mems_allowed_list 0,2";
    EXPECT_FALSE(m.fake);
    EXPECT_TRUE(m.enabled);
    EXPECT_TRUE(m.balancing);
    EXPECT_EQ(m.memory_policy, 0) << "asked of the kernel only for the real /proc";
    EXPECT_TRUE(mentions(m, "node 1 cpus 4-7 memory 2048 MiB (not allowed)"));
    EXPECT_TRUE(mentions(m, "warning: automatic NUMA balancing is on"));
    EXPECT_EQ(m.node_of_cpu(5), 1);
    EXPECT_EQ(m.node_of_cpu(9), -1);
}

TEST(NumaMachine, OffAndOneNodeMeanTheFlatTeam) {
    const FakeTree t = two_sockets("0");
    const NumaMachine off = read_numa_machine(t.sources("", false));
    EXPECT_FALSE(off.enabled);
    EXPECT_TRUE(mentions(off, "off (MEMRA_CPU_EXPERT_NUMA=off)"));
    EXPECT_FALSE(off.balancing);
    EXPECT_FALSE(mentions(off, "balancing"));

    FakeTree one;
    one.write("sys/devices/system/node/online", "0");
    one.node(0, "0-7", 1024);
    const NumaMachine m = read_numa_machine(one.sources());
    ASSERT_EQ(m.nodes.size(), 1u);
    EXPECT_FALSE(m.enabled);
    EXPECT_TRUE(m.nodes[0].memory_allowed) << "no status file: nothing is known to be refused";

    FakeTree none;  // a kernel without NUMA: no node directory at all
    const NumaMachine flat = read_numa_machine(none.sources());
    ASSERT_EQ(flat.nodes.size(), 1u);
    EXPECT_FALSE(flat.nodes[0].cpus.empty());
    EXPECT_FALSE(flat.enabled);
}

// Fake nodes over the CPUs of real ones: each fake node's memory is the real node of its first CPU.
TEST(NumaMachine, FakeNodesTakeTheMemoryOfTheirFirstCpusNode) {
    const FakeTree t = two_sockets("0");
    const NumaMachine m = read_numa_machine(t.sources("0:0-1;1:2-3;2:4-7"));
    ASSERT_TRUE(m.fake);
    ASSERT_EQ(m.nodes.size(), 3u);
    EXPECT_EQ(m.nodes[0].memory_node, 0);
    EXPECT_EQ(m.nodes[1].memory_node, 0);
    EXPECT_EQ(m.nodes[2].memory_node, 1);
    EXPECT_EQ(m.nodes[2].memory_bytes, uint64_t{2} << 30);
    EXPECT_FALSE(m.nodes[2].memory_allowed);
    EXPECT_TRUE(mentions(m, "MEMRA_CPU_EXPERT_NUMA_TOPOLOGY: node 0 cpus 0-1 memory 1024 MiB on node 0"));

    // On a one-node machine every fake node's memory is node 0's.
    FakeTree one;
    one.write("sys/devices/system/node/online", "0");
    one.node(0, "0-1", 1024);
    const NumaMachine f = read_numa_machine(one.sources("0:0;1:1"));
    ASSERT_EQ(f.nodes.size(), 2u);
    EXPECT_TRUE(f.enabled);
    EXPECT_EQ(f.nodes[1].memory_node, 0);
}

cpu_set_t mask_of(std::initializer_list<int> cpus) {
    cpu_set_t s;
    CPU_ZERO(&s);
    for (int c : cpus) CPU_SET(c, &s);
    return s;
}

TEST(NumaNodeView, IsTheMaskIntersectedWithTheNodes) {
    const FakeTree t = two_sockets("0");
    const NumaMachine m = read_numa_machine(t.sources());
    std::vector<NodeCpus> v = node_view(m, mask_of({1, 2, 6}));
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[0].node, 0);
    EXPECT_EQ(v[0].count, 2);
    EXPECT_TRUE(CPU_ISSET(1, &v[0].cpus) && CPU_ISSET(2, &v[0].cpus) && !CPU_ISSET(6, &v[0].cpus));
    EXPECT_EQ(v[1].count, 1);
    EXPECT_TRUE(CPU_ISSET(6, &v[1].cpus));
    // A mask on one node (an engine's executor pinned to a socket): one node, the flat team.
    v = node_view(m, mask_of({4, 5}));
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0].node, 1);
    // A node none of whose CPUs the mask allows is not in the view.
    EXPECT_TRUE(node_view(m, mask_of({9})).empty());
}

}  // namespace
}  // namespace memra
