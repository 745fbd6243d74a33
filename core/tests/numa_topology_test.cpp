// The NUMA pieces on their own (docs/numa.md): the cpulist and override parsers, the machine read
// from fake sysfs and procfs trees, a thread's view of it under an affinity mask, the row split
// and the dealing of helpers, and a team spread over groups (pinning, every item once).
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

#include "compute/team.h"
#include "compute/team_layout.h"
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

TEST(NumaSplit, RowsFollowTheMembersAtMultiplesOfTheGroup) {
    int32_t b[4];
    const int32_t even[] = {1, 1};
    split_rows(4096, 8, even, 2, b);
    EXPECT_EQ((std::vector<int32_t>(b, b + 3)), (std::vector<int32_t>{0, 2048, 4096}));
    const int32_t three[] = {1, 2, 1};
    split_rows(1000, 8, three, 3, b);
    EXPECT_EQ((std::vector<int32_t>(b, b + 4)), (std::vector<int32_t>{0, 248, 752, 1000}))
        << "250 and 750 to the nearest multiple of 8";
    const int32_t uneven[] = {3, 1};
    split_rows(100, 64, uneven, 2, b);
    EXPECT_EQ(b[1], 64) << "75 to the nearest multiple of 64";
    split_rows(20, 64, even, 2, b);
    EXPECT_EQ(b[1], 0) << "a matrix of fewer rows than a group: all to the last group";
    EXPECT_EQ(b[2], 20);
    // Every boundary is a multiple, ascending, for any shape.
    for (int32_t out : {1, 7, 64, 255, 1536, 4099})
        for (int32_t multiple : {1, 8, 24, 64}) {
            const int32_t members[] = {5, 1, 3};
            split_rows(out, multiple, members, 3, b);
            for (int g = 0; g < 3; ++g) {
                EXPECT_LE(b[g], b[g + 1]);
                if (g > 0 && b[g] < out) {
                    EXPECT_EQ(b[g] % multiple, 0) << out << " " << multiple;
                }
            }
            EXPECT_EQ(b[3], out);
        }
}

TEST(NumaSplit, HelpersGoWhereTheCpusAre) {
    int32_t h[3];
    const int32_t caps[] = {3, 4};  // the caller's node has one CPU less for helpers
    deal_helpers(7, caps, 2, h);
    EXPECT_EQ(h[0] + h[1], 7);
    EXPECT_EQ(h[0], 3);
    deal_helpers(1, caps, 2, h);
    EXPECT_EQ(h[0], 0);
    EXPECT_EQ(h[1], 1) << "the larger remainder";
    const int32_t tie[] = {2, 2};
    deal_helpers(1, tie, 2, h);
    EXPECT_EQ(h[0], 1) << "ties to the lower group";
    const int32_t skew[] = {0, 1, 5};
    deal_helpers(3, skew, 3, h);
    EXPECT_EQ(h[0], 0);
    EXPECT_LE(h[1], 1);
    EXPECT_EQ(h[0] + h[1] + h[2], 3);
}

// A team of two groups on this machine's CPUs (the first and the last the mask allows; the same
// CPU where only one is allowed): every item runs once, and the helper, pinned to group 1's CPU,
// runs there; a flat call after it gives the helper the caller's mask back.
TEST(NumaTeam, GroupsRunEveryItemOnceWithTheirHelpersPinned) {
    cpu_set_t mask;
    ASSERT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
    int first = -1, last = -1;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &mask)) {
            if (first < 0) first = c;
            last = c;
        }
    const cpu_set_t cpus[2] = {mask_of({first}), mask_of({last})};
    ASSERT_EQ(team_helpers(1), 1);
    std::vector<long> items[2];
    for (long i = 0; i < 200; ++i) items[i % 3 == 0 ? 0 : 1].push_back(i);
    TeamGroup groups[2];
    for (int g = 0; g < 2; ++g) {
        groups[g].items = items[g].data();
        groups[g].count = static_cast<long>(items[g].size());
        groups[g].cpus = &cpus[g];
        groups[g].node = g;
    }
    groups[1].helpers = 1;
    const pthread_t caller = pthread_self();
    std::atomic<int> runs[200] = {};
    std::atomic<int> helper_items{0};
    std::mutex mutex;
    std::set<int> helper_cpus;
    // The caller's first item waits (up to 10 s) for the helper to have run one, so that the
    // helper is seen whatever the machine's load.
    auto wait_for_helper = [&] {
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (helper_items.load() == 0 && std::chrono::steady_clock::now() < until) sched_yield();
    };
    auto work = [&](long item) {
        runs[item].fetch_add(1);
        if (pthread_equal(pthread_self(), caller)) {
            if (item == 0) wait_for_helper();
            return;
        }
        std::lock_guard<std::mutex> lock(mutex);
        helper_cpus.insert(sched_getcpu());
        helper_items.fetch_add(1);
    };
    for (int call = 0; call < 3; ++call) run_team_groups(groups, 2, 0, 12345, work);
    for (int i = 0; i < 200; ++i) EXPECT_EQ(runs[i].load(), 3) << i;
    EXPECT_EQ(helper_cpus, std::set<int>{last}) << "the helper ran off its group's CPU";

    // A flat call: the helper runs where the caller may (its mask is the caller's again).
    helper_items = 0;
    int helper_mask_count = -1;
    auto flat = [&](long item) {
        if (pthread_equal(pthread_self(), caller)) {
            if (item == 0) wait_for_helper();
            return;
        }
        cpu_set_t m;
        if (sched_getaffinity(0, sizeof m, &m) == 0) helper_mask_count = CPU_COUNT(&m);
        helper_items.fetch_add(1);
    };
    run_team(2, 2, flat);
    EXPECT_EQ(helper_mask_count, CPU_COUNT(&mask));
}

}  // namespace
}  // namespace memra
