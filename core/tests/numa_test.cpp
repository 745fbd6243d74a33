// A call's team spread over NUMA nodes (docs/numa.md), through the ABI, on fake nodes
// (MEMRA_CPU_EXPERT_NUMA_TOPOLOGY) over this machine's CPUs: the results of every format, token
// and rows calls, weights in memory and from a file (read by the call's team, then cached), at 1
// and several threads, are bit-identical with NUMA off, and the helpers really ran pinned to their
// node. The library reads its environment once, so each setting runs in a child process.
#include <gtest/gtest.h>

#include <dirent.h>
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "child_scenario.h"
#include "client_checks.h"
#include "formats.h"
#include "lib_call.h"
#include "weights_file.h"

namespace memra::tests {
namespace {

// FNV-1a over the bits of a result: the child prints these, the parent compares them.
uint64_t digest(const std::vector<float> &v) {
    uint64_t h = 1469598103934665603ull;
    const auto *bytes = reinterpret_cast<const unsigned char *>(v.data());
    for (size_t i = 0; i < v.size() * sizeof(float); ++i) h = (h ^ bytes[i]) * 1099511628211ull;
    return h;
}

void print(const std::string &what, int32_t threads, const std::vector<float> &v) {
    std::printf("%s threads %d %016llx\n", what.c_str(), threads, static_cast<unsigned long long>(digest(v)));
}

// The digest lines of a child's output (gtest's own lines, with their timings, left out).
std::string digests(const std::string &out) {
    std::istringstream lines(out);
    std::string line, kept;
    while (std::getline(lines, line))
        if (line.find(" threads ") != std::string::npos && line[0] != '[') kept += line + "\n";
    return kept;
}

// A token call of `p`'s experts from a file (read by the call, then from the cache).
std::vector<float> token_from_file(const testkit::TokenProblem &p, int32_t threads) {
    std::vector<CpuExpertV2> experts = p.experts.descriptors();
    const WeightsFile file(projections_of(experts));
    std::vector<float> out(p.input.size());
    for (int call = 0; call < 2; ++call) {
        const CallResult r = call_token(experts.data(), static_cast<int32_t>(experts.size()), p.input.data(),
                                        out.data(), threads);
        EXPECT_EQ(r.status, MEMRA_STATUS_OK) << r.message;
    }
    return out;
}

// The Cpus_allowed_list of every library helper thread of this process.
std::vector<std::string> helper_cpu_lists() {
    std::vector<std::string> lists;
    DIR *dir = opendir("/proc/self/task");
    if (!dir) return lists;
    while (const dirent *e = readdir(dir)) {
        const std::string task = std::string("/proc/self/task/") + e->d_name;
        std::string comm, line;
        std::getline(std::ifstream(task + "/comm"), comm);
        if (comm != "memra-helper") continue;
        std::ifstream status(task + "/status");
        while (std::getline(status, line))
            if (line.rfind("Cpus_allowed_list:", 0) == 0) lists.push_back(line.substr(line.find_first_not_of(" \t", 18)));
    }
    closedir(dir);
    return lists;
}

// Every format (gate, up and down of one format), a mixed problem large enough for several tiles
// per node, memory and file, token and rows calls, at 1, 2 and 3 threads (3: more than this
// machine's CPUs when it has two, capped by the mask).
MEMRA_CHILD_SCENARIO(Results) {
    struct Case {
        std::string name;
        std::vector<expertkit::ExpertSpec> specs;
        int32_t embd, ff;
    };
    std::vector<Case> cases;
    for (int32_t q : expertkit::all_qtypes())
        cases.push_back({expertkit::qtype_name(q), {expertkit::uniform_spec(q, 0.6f), expertkit::uniform_spec(q, -0.4f)}, 512, 256});
    cases.push_back({"mixed-2048",
                     {expertkit::ExpertSpec{MEMRA_QTYPE_Q4_K, MEMRA_QTYPE_IQ4_XS, MEMRA_QTYPE_Q6_K, 1, 1, 1, 0.5f},
                      expertkit::ExpertSpec{MEMRA_QTYPE_Q8_0, MEMRA_QTYPE_NVFP4, MEMRA_QTYPE_IQ3_S, 1, 1, 1, -0.3f},
                      expertkit::ExpertSpec{MEMRA_QTYPE_BF16, MEMRA_QTYPE_Q2_K, MEMRA_QTYPE_Q4_0, 1, 1, 1, 0.2f}},
                     2048, 1024});
    std::vector<testkit::TokenProblem> tokens;
    std::vector<std::string> names;
    for (size_t i = 0; i < cases.size(); ++i) {
        tokens.push_back(testkit::make_token_problem(cases[i].specs, cases[i].embd, cases[i].ff, 700 + i));
        names.push_back(cases[i].name);
    }
    for (size_t i = 0; i < tokens.size(); ++i) {
        const std::vector<float> one = run_token(tokens[i], 1);
        print(names[i] + " token memory", 1, one);
        for (int32_t threads : {2, 3}) {
            const std::vector<float> many = run_token(tokens[i], threads);
            EXPECT_TRUE(same_bits(one, many)) << names[i] << " " << threads << " threads";
            print(names[i] + " token memory", threads, many);
        }
        const std::vector<float> file = token_from_file(tokens[i], 2);
        EXPECT_TRUE(same_bits(one, file)) << names[i] << " from a file";
        print(names[i] + " token file", 2, file);
        const testkit::RowsProblem rows =
            testkit::make_rows_problem(cases[i].specs[0], 9, cases[i].embd, cases[i].ff, 800 + i);
        const std::vector<float> rows_one = run_rows(rows, 1);
        const std::vector<float> rows_two = run_rows(rows, 2);
        EXPECT_TRUE(same_bits(rows_one, rows_two)) << names[i] << " rows";
        print(names[i] + " rows memory", 2, rows_two);
    }
    // Where the helpers ran: pinned to one fake node's CPU each when the topology is set, else
    // wherever the caller may.
    cpu_set_t mask;
    ASSERT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
    const char *fake = std::getenv("MEMRA_CPU_EXPERT_NUMA_TOPOLOGY");
    const std::vector<std::string> helpers = helper_cpu_lists();
    if (CPU_COUNT(&mask) < 2) {
        EXPECT_TRUE(helpers.empty()) << "one CPU: no helper";
        return;
    }
    ASSERT_FALSE(helpers.empty());
    const bool two_fake_nodes = fake && std::string(fake) == "0:0;1:1" && CPU_ISSET(0, &mask) && CPU_ISSET(1, &mask);
    for (const std::string &cpus : helpers) {
        if (two_fake_nodes) {
            EXPECT_TRUE(cpus == "0" || cpus == "1") << "a helper runs on " << cpus << ", not on one node";
        } else if (!fake) {
            EXPECT_NE(cpus.find_first_of(",-"), std::string::npos) << "a helper was pinned with NUMA off: " << cpus;
        }
    }
}

// NUMA off is today's team; the fake topologies spread it over two nodes (in either order), or
// name a node whose CPU this machine lacks (left out: no allowed CPU), or one node (the flat team).
TEST(Numa, SpreadTeamsComputeTheSameBitsAsTheFlatTeam) {
    const std::string off = digests(expect_child_passes("Results", {{"MEMRA_CPU_EXPERT_NUMA", "off"}}));
    ASSERT_NE(off.find("mixed-2048 token file threads 2"), std::string::npos) << off;
    for (const char *topology : {"0:0;1:1", "0:1;1:0", "0:0;1:1;2:4095", "0:0-1"})
        EXPECT_EQ(digests(expect_child_passes("Results", {{"MEMRA_CPU_EXPERT_NUMA_TOPOLOGY", topology}})), off) << topology;
}

// The settings: a malformed value is status 5 for every call, naming the variable; the load log
// says what the library does with the nodes (a one-node machine logs nothing of it).
TEST(Numa, BadSettingsAreRefusedAndTheLogSaysWhatIsDone) {
    expect_unusable(run_client({{"MEMRA_CPU_EXPERT_NUMA", "on"}}), {"MEMRA_CPU_EXPERT_NUMA='on' is not auto or off"});
    expect_unusable(run_client({{"MEMRA_CPU_EXPERT_NUMA_TOPOLOGY", "0:0;0:1"}}),
                    {"MEMRA_CPU_EXPERT_NUMA_TOPOLOGY='0:0;0:1': node 0 is given twice"});
    const ProcessResult spread =
        run_client({{"MEMRA_CPU_EXPERT_NUMA_TOPOLOGY", "0:0;1:1"}, {"MEMRA_CPU_EXPERT_LOG", "1"}});
    EXPECT_EQ(spread.exit_code, 0) << show(spread);
    EXPECT_NE(spread.err.find("memra-cpu-experts: numa: MEMRA_CPU_EXPERT_NUMA_TOPOLOGY: node 0 cpus 0 memory "),
              std::string::npos) << spread.err;
    EXPECT_NE(spread.err.find("memra-cpu-experts: numa: on: "), std::string::npos) << spread.err;
    const ProcessResult off = run_client(
        {{"MEMRA_CPU_EXPERT_NUMA_TOPOLOGY", "0:0;1:1"}, {"MEMRA_CPU_EXPERT_NUMA", "off"}, {"MEMRA_CPU_EXPERT_LOG", "1"}});
    EXPECT_NE(off.err.find("memra-cpu-experts: numa: off (MEMRA_CPU_EXPERT_NUMA=off)"), std::string::npos) << off.err;
    const ProcessResult one = run_client({{"MEMRA_CPU_EXPERT_NUMA_TOPOLOGY", "0:0-1"}, {"MEMRA_CPU_EXPERT_LOG", "1"}});
    EXPECT_EQ(one.err.find("numa"), std::string::npos) << one.err;
}

}  // namespace
}  // namespace memra::tests
