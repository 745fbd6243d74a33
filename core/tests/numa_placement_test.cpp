// NUMA memory placement (docs/numa.md, "Memory placement"): which pages of a cache chunk are asked
// of which node (mbind recorded through a hook), where the kernel really put them (move_pages with
// no target, and the policy get_mempolicy reads back), the faults that turn placement off with one
// line, and the library's own cache entries placed for a team spread over fake nodes, for a team
// on one node, and by the prefetch worker, with the bytes per node the describe line reports.
//
// On a machine of one node the fake nodes' memory is real node 0 (topology.h): the kernel is asked
// for node 0 for every range and move_pages must say node 0; which range belongs to which fake
// node is checked through the recorded calls and the per-node counts. On a host of several nodes
// KernelPutsThePagesWhereAsked places on two real nodes and checks each page's node.
#include <gtest/gtest.h>

#include <linux/mempolicy.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "compute/call_plan.h"
#include "compute/moe.h"
#include "dispatch/backend_registry.h"
#include "library.h"
#include "numa/page_nodes.h"
#include "numa/placement.h"
#include "numa/topology.h"
#include "problems.h"
#include "projection_file.h"
#include "stats.h"
#include "weights/io.h"
#include "weights/repack.h"

namespace memra {
namespace {

constexpr size_t kPage = 4096;

// Two nodes whose memory is real nodes `mem0` and `mem1`.
NumaMachine two_nodes(int32_t mem0, int32_t mem1) {
    NumaMachine m;
    m.enabled = true;
    for (int32_t i = 0; i < 2; ++i) {
        NumaNode n;
        n.id = i;
        n.cpus = {i};
        n.memory_node = i == 0 ? mem0 : mem1;
        n.memory_bytes = uint64_t{1} << 30;
        m.nodes.push_back(n);
    }
    return m;
}

// Anonymous memory, faulted in, as the cache's slabs are.
struct Mapping {
    explicit Mapping(size_t bytes) : bytes(bytes) {
        void *p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        data = p == MAP_FAILED ? nullptr : static_cast<uint8_t *>(p);
        if (data) std::memset(data, 1, bytes);
    }
    ~Mapping() {
        if (data) ::munmap(data, bytes);
    }
    uint8_t *data;
    size_t bytes;
};

struct MbindCall {
    size_t offset, bytes;
    int mode;
    unsigned long mask;
    unsigned flags;
};
std::vector<MbindCall> g_calls;
uint8_t *g_base = nullptr;
int g_refuse_with = 0;     // errno to answer with; 0: succeed
bool g_forward = false;    // also make the real call

long recording_mbind(void *addr, unsigned long len, int mode, const unsigned long *mask, unsigned long maxnode,
                     unsigned flags) {
    g_calls.push_back({size_t(static_cast<uint8_t *>(addr) - g_base), len, mode, *mask, flags});
    EXPECT_EQ(maxnode, 8 * sizeof(unsigned long) + 1);
    if (g_refuse_with) {
        errno = g_refuse_with;
        return -1;
    }
    return g_forward ? ::syscall(SYS_mbind, addr, len, mode, mask, maxnode, flags) : 0;
}

// The hook for one test, and the real system call (and placement on) afterwards.
struct Recording {
    explicit Recording(uint8_t *base, int refuse_with = 0, bool forward = false) {
        g_calls.clear();
        g_base = base;
        g_refuse_with = refuse_with;
        g_forward = forward;
        set_mbind_for_tests(recording_mbind);
    }
    ~Recording() { set_mbind_for_tests(nullptr); }
};

// The lines a piece of code wrote to stderr.
std::vector<std::string> stderr_lines(const std::string &text) {
    std::vector<std::string> lines;
    size_t at = 0;
    for (size_t nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) lines.push_back(text.substr(at, nl - at));
    return lines;
}

// Rows [0, 4) and [4, 8) of a page each, on nodes 0 and 1, placed twice over `chunk` (8 pages)
// with the load log on: the lines said.
std::vector<std::string> place_twice_logged(const NumaMachine &machine, const Mapping &chunk, uint64_t *on_node) {
    const int32_t bounds[] = {0, 4, 8}, nodes[] = {0, 1};
    testing::internal::CaptureStderr();
    for (int i = 0; i < 2; ++i) place_rows(machine, chunk.data, chunk.bytes, kPage, bounds, nodes, 2, on_node, true);
    return stderr_lines(testing::internal::GetCapturedStderr());
}

// 40 rows of 1000 bytes in a chunk of 10 pages: group 0's rows [0, 16) end inside page 3, so page
// 3 (which they start in) is group 0's and group 1 starts at page 4; the chunk's tail is group 1's.
TEST(NumaPlacement, PagesGoToTheGroupWhoseRowsTheyStartIn) {
    Mapping chunk(10 * kPage);
    ASSERT_NE(chunk.data, nullptr);
    const NumaMachine machine = two_nodes(3, 5);
    const int32_t bounds[] = {0, 16, 40}, nodes[] = {1, 0};  // group 0 on node 1, group 1 on node 0
    uint64_t on_node[kMaxPlacedNodes] = {};
    Recording rec(chunk.data);
    place_rows(machine, chunk.data, chunk.bytes, 1000, bounds, nodes, 2, on_node, false);
    ASSERT_EQ(g_calls.size(), 2u);
    EXPECT_EQ(g_calls[0].offset, 0u);
    EXPECT_EQ(g_calls[0].bytes, 4 * kPage);
    EXPECT_EQ(g_calls[0].mask, 1ul << 5) << "node 1's memory is real node 5";
    EXPECT_EQ(g_calls[1].offset, 4 * kPage);
    EXPECT_EQ(g_calls[1].bytes, 6 * kPage);
    EXPECT_EQ(g_calls[1].mask, 1ul << 3);
    for (const MbindCall &c : g_calls) {
        EXPECT_EQ(c.mode, MPOL_PREFERRED) << "preferred, never strict";
        EXPECT_EQ(c.flags, unsigned(MPOL_MF_MOVE)) << "the chunk is faulted in already: its pages must move";
    }
    EXPECT_EQ(on_node[1], 4 * kPage);
    EXPECT_EQ(on_node[0], 6 * kPage);

    // A group without rows asks for nothing; a boundary on a page boundary splits there.
    const int32_t three[] = {0, 8, 8, 40}, three_nodes[] = {0, 1, 0};
    g_calls.clear();
    place_rows(machine, chunk.data, chunk.bytes, 1024, three, three_nodes, 3, on_node, false);
    ASSERT_EQ(g_calls.size(), 2u);
    EXPECT_EQ(g_calls[0].bytes, 2 * kPage);
    EXPECT_EQ(g_calls[1].offset, 2 * kPage);
    EXPECT_EQ(g_calls[1].bytes, 8 * kPage);
}

// The kernel's answer, not only the request: every page is on the real node its group's node
// names (move_pages), under the policy asked (get_mempolicy). Two real nodes with memory when the
// machine has them, else the fake nodes' mapping onto node 0.
TEST(NumaPlacement, KernelPutsThePagesWhereAsked) {
    const NumaMachine real = read_numa_machine(NumaSources{});
    std::vector<int32_t> memory;
    for (const NumaNode &n : real.nodes)
        if (n.memory_bytes > 0 && n.memory_allowed && n.memory_node < 64) memory.push_back(n.memory_node);
    const NumaMachine machine = memory.size() >= 2 ? two_nodes(memory[0], memory[1]) : two_nodes(0, 0);
    if (real.memory_policy != 0) {  // numactl: the library asks for nothing, by design
        EXPECT_FALSE(placement_on(machine.memory_policy ? machine : real));
        return;
    }
    Mapping chunk(64 * kPage);
    ASSERT_NE(chunk.data, nullptr);
    const int32_t bounds[] = {0, 20, 64}, nodes[] = {0, 1};
    uint64_t on_node[kMaxPlacedNodes] = {};
    place_rows(machine, chunk.data, chunk.bytes, kPage, bounds, nodes, 2, on_node, true);
    EXPECT_EQ(on_node[0], 20 * kPage);
    EXPECT_EQ(on_node[1], 44 * kPage);
    for (size_t page = 0; page < 64; ++page) {
        const NumaNode &asked = machine.nodes[page < 20 ? 0 : 1];
        const uint8_t *at = chunk.data + page * kPage;
        EXPECT_EQ(page_node(at), asked.memory_node) << "page " << page;
        int mode = -1;
        unsigned long mask = 0;
        ASSERT_EQ(::syscall(SYS_get_mempolicy, &mode, &mask, 8 * sizeof mask + 1, at, MPOL_F_ADDR), 0) << std::strerror(errno);
        EXPECT_EQ(mode, MPOL_PREFERRED) << "page " << page;
        EXPECT_EQ(mask, 1ul << asked.memory_node) << "page " << page;
    }
}

// mbind refused (a seccomp filter's EPERM, EINVAL, a kernel without NUMA's ENOSYS): nothing
// placed, one line, and placement off from then on (no further call), as before placement.
TEST(NumaPlacement, RefusedMbindTurnsPlacementOffWithOneLine) {
    Mapping chunk(8 * kPage);
    ASSERT_NE(chunk.data, nullptr);
    const NumaMachine machine = two_nodes(0, 0);
    for (int error : {EPERM, EINVAL, ENOSYS}) {
        Recording rec(chunk.data, error);
        ASSERT_TRUE(placement_on(machine));
        uint64_t on_node[kMaxPlacedNodes] = {};
        const std::vector<std::string> lines = place_twice_logged(machine, chunk, on_node);
        EXPECT_EQ(g_calls.size(), 1u) << "asked again after a refusal";
        EXPECT_FALSE(placement_on(machine));
        EXPECT_EQ(on_node[0] + on_node[1], 0u);
        ASSERT_EQ(lines.size(), 1u) << std::strerror(error);
        EXPECT_NE(lines[0].find("memra-cpu-experts: numa: mbind refused, memory placement off"), std::string::npos) << lines[0];
        EXPECT_NE(lines[0].find(std::strerror(error)), std::string::npos) << lines[0];
    }
    // Without the load log the refusal is silent (and placement still off).
    Recording rec(chunk.data, EPERM);
    uint64_t on_node[kMaxPlacedNodes] = {};
    const int32_t bounds[] = {0, 4, 8}, nodes[] = {0, 1};
    testing::internal::CaptureStderr();
    place_rows(machine, chunk.data, chunk.bytes, kPage, bounds, nodes, 2, on_node, false);
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
    EXPECT_FALSE(placement_on(machine));
}

// A node without memory, or whose memory the process may not use (a cpuset): its rows are left
// to the kernel (one line, once); the other node's are placed.
TEST(NumaPlacement, NodeWithoutUsableMemoryIsLeftToTheKernel) {
    Mapping chunk(8 * kPage);
    ASSERT_NE(chunk.data, nullptr);
    for (int variant = 0; variant < 2; ++variant) {
        NumaMachine machine = two_nodes(0, 0);
        if (variant == 0)
            machine.nodes[1].memory_bytes = 0;
        else
            machine.nodes[1].memory_allowed = false;
        Recording rec(chunk.data);
        uint64_t on_node[kMaxPlacedNodes] = {};
        const std::vector<std::string> lines = place_twice_logged(machine, chunk, on_node);
        ASSERT_EQ(g_calls.size(), 2u) << "node 0's rows, twice";
        EXPECT_EQ(g_calls[0].offset, 0u);
        EXPECT_EQ(g_calls[0].bytes, 4 * kPage);
        EXPECT_EQ(on_node[0], 8 * kPage);
        EXPECT_EQ(on_node[1], 0u);
        ASSERT_EQ(lines.size(), 1u);
        EXPECT_NE(lines[0].find("a node without memory this process may use (node 1)"), std::string::npos) << lines[0];
        EXPECT_TRUE(placement_on(machine)) << "the other nodes are still placed";
    }
}

// A memory policy of the process's own (numactl --interleave, --membind, --preferred) is never
// overridden; one node, or NUMA off, asks for nothing.
TEST(NumaPlacement, NothingIsAskedUnderAPolicyOfTheProcessOrOnOneNode) {
    Mapping chunk(8 * kPage);
    ASSERT_NE(chunk.data, nullptr);
    const int32_t bounds[] = {0, 4, 8}, nodes[] = {0, 1};
    for (int variant = 0; variant < 2; ++variant) {
        NumaMachine machine = two_nodes(0, 0);
        if (variant == 0)
            machine.memory_policy = MPOL_INTERLEAVE;
        else
            machine.enabled = false;
        Recording rec(chunk.data);
        uint64_t on_node[kMaxPlacedNodes] = {};
        EXPECT_FALSE(placement_on(machine));
        place_rows(machine, chunk.data, chunk.bytes, kPage, bounds, nodes, 2, on_node, true);
        place_matrix(machine, chunk.data, chunk.bytes, kPage, bounds, nodes, 1, 1, on_node, true);
        EXPECT_TRUE(g_calls.empty());
        EXPECT_EQ(on_node[0] + on_node[1], 0u);
    }
}

// The engine's weights in memory: a spread team's tiles follow the pages. Made-up samples: the
// first half of every matrix on real node 7, the second on node 9, group 0's memory node 9, group
// 1's node 7. File-backed projections (placed by the cache) and unknown pages keep their group.
PageSamples halves(const uint8_t *, size_t) { return PageSamples{{7, 7, 7, 7, 9, 9, 9, 9}}; }
PageSamples unknown(const uint8_t *, size_t) { return PageSamples{{-1, -1, -1, -1, -1, -1, -1, -1}}; }

TEST(NumaPlacement, TilesFollowThePagesOfWeightsInMemory) {
    static const uint8_t bytes[32 * 64] = {};
    CpuProjectionV2 in_memory{}, in_file{};
    in_file.file_fd = 3;
    in_memory.file_fd = -1;
    CallPlan plan;
    plan.experts.resize(2);
    for (size_t e = 0; e < 2; ++e)
        for (int32_t k = 0; k < kProjectionKinds; ++k) {
            PlannedProjection &p = plan.experts[e].projection[k];
            p.source = e == 0 ? &in_memory : &in_file;
            p.weights = e == 0 ? bytes : nullptr;
            p.row_bytes = 64;
            p.out = 32;
        }
    auto tiles = [] {
        std::vector<Tile> t;
        for (int32_t e = 0; e < 2; ++e)
            for (int32_t r = 0; r < 32; r += 8) t.push_back({e, r, r + 8, r < 16 ? 0 : 1});
        return t;
    };
    plan.gate_up_tiles = plan.down_tiles = tiles();
    const int32_t memory[] = {9, 7};
    follow_memory_pages(plan, memory, 2, halves);
    for (const std::vector<Tile> *list : {&plan.gate_up_tiles, &plan.down_tiles})
        for (const Tile &t : *list) {
            const int32_t want = t.expert == 1 ? (t.row_begin < 16 ? 0 : 1) : (t.row_begin < 16 ? 1 : 0);
            EXPECT_EQ(t.group, want) << "expert " << t.expert << " rows " << t.row_begin;
        }
    plan.gate_up_tiles = plan.down_tiles = tiles();
    follow_memory_pages(plan, memory, 2, unknown);
    for (const Tile &t : plan.down_tiles) EXPECT_EQ(t.group, t.row_begin < 16 ? 0 : 1);
}

// The samples the kernel gives: every part of touched memory on the node move_pages names for its
// first page; memory not mapped any more is unknown (-1) once the kept samples are forgotten.
TEST(NumaPlacement, PagesAreSampledOncePerMatrix) {
    Mapping matrix(16 * kPage);
    ASSERT_NE(matrix.data, nullptr);
    forget_page_samples();
    const int32_t node = page_node(matrix.data);
    const PageSamples first = sample_pages(matrix.data, matrix.bytes);
    for (int32_t i = 0; i < kPageSamples; ++i) EXPECT_EQ(first.node[i], node >= 0 ? node : -1) << i;
    for (size_t offset : {size_t{0}, matrix.bytes / 2, matrix.bytes - 1})
        EXPECT_EQ(sampled_node(first, matrix.bytes, offset), node >= 0 ? node : -1);
    ::munmap(matrix.data, matrix.bytes);
    const PageSamples kept = sample_pages(matrix.data, matrix.bytes);
    EXPECT_EQ(kept.node[0], first.node[0]) << "kept, not asked again";
    forget_page_samples();
    const PageSamples gone = sample_pages(matrix.data, matrix.bytes);
    for (int32_t i = 0; i < kPageSamples; ++i) EXPECT_EQ(gone.node[i], -1) << i;
    matrix.data = nullptr;
    forget_page_samples();
}

// The library's cache, through its own calls.

// The library's own registry (the prefetch worker plans with it), the test build's plugins found.
const BackendRegistry &registry() { return Library::instance().registry(); }

uint64_t placed_on(int32_t node) { return stats().resident_on_node[node].load(); }

// Where each projection of `experts` (file-backed, cached) lies: every page on the real node of
// the node that computes its rows, under a team of `groups` groups of one member each on nodes
// 0..groups-1 (groups 1: every page on `home`). Returns the bytes expected per node.
std::vector<uint64_t> check_entries(const std::vector<CpuExpertV2> &experts, int32_t groups, int32_t home) {
    const NumaMachine &machine = Library::instance().numa();
    CallPlan plan;
    plan_call(registry(), experts.data(), int32_t(experts.size()), 1, nullptr, plan, /*file_cache=*/true);
    const int32_t members[] = {1, 1};
    cut_tiles(plan, groups, members, groups);
    std::vector<uint64_t> expected(machine.nodes.size(), 0);
    for (size_t i = 0; i < experts.size(); ++i)
        for (int32_t k = 0; k < kProjectionKinds; ++k) {
            const PlannedProjection &p = plan.experts[i].projection[k];
            const CacheKey key{identify_file(p.source->file_fd, p.source->file_offset, p.source->byte_len),
                               p.source->file_offset, p.source->byte_len, layout_of(p.kernel)};
            const WeightCache::Handle h = Library::instance().cache().acquire(key, /*claim=*/false);
            EXPECT_EQ(h.outcome, WeightCache::Outcome::kReady) << expert_label(int32_t(i), projection_name(k));
            if (h.outcome != WeightCache::Outcome::kReady) continue;
            int32_t bounds[3] = {0, p.out, p.out};
            if (groups > 1) group_row_bounds(plan, i, k, groups, bounds);
            const size_t chunk = SlabPool::chunk_bytes(p.source->byte_len);
            for (size_t page = 0; page * kPage < chunk; ++page) {
                int32_t g = 0;
                // The group whose rows the page starts in (place_rows).
                while (g + 1 < groups && page * kPage >= (size_t(bounds[g + 1]) * p.row_bytes + kPage - 1) / kPage * kPage) ++g;
                const int32_t node = groups > 1 ? g : home;
                EXPECT_EQ(page_node(h.data + page * kPage), machine.nodes[size_t(node)].memory_node)
                    << expert_label(int32_t(i), projection_name(k)) << " page " << page;
                expected[size_t(node)] += kPage;
            }
            Library::instance().cache().unpin(h.entry);
        }
    return expected;
}

// Fake nodes 0:0;1:1 over this machine's CPUs: a 2-thread call spreads its team, and each cached
// entry's rows are on the node that computes them; a thread pinned to CPU 1 (a team on node 1)
// gets whole entries there; the prefetch worker places like the hinting thread's last call. The
// describe line's counts are the bytes placed. (The library reads its environment once: this is
// the only test of this binary that makes it.)
TEST(NumaPlacement, CacheEntriesLandOnTheNodesThatComputeThem) {
    ::setenv("MEMRA_CPU_EXPERT_NUMA_TOPOLOGY", "0:0;1:1", 1);
    ::setenv("MEMRA_CPU_EXPERT_CACHE_BYTES", "256M", 1);
    ::setenv("MEMRA_CPU_EXPERT_PLUGIN_DIR", MEMRA_TEST_BACKEND_DIR, 1);
    Library &library = Library::instance();
    ASSERT_TRUE(registry().usable()) << registry().unusable_reason();
    cpu_set_t mask;
    ASSERT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
    const bool two_cpus = CPU_ISSET(0, &mask) && CPU_ISSET(1, &mask);
    auto problem = [](uint64_t seed) {
        return testkit::make_token_problem({expertkit::ExpertSpec{MEMRA_QTYPE_Q4_0, MEMRA_QTYPE_Q8_0, MEMRA_QTYPE_Q4_K, 1, 1, 1, 0.6f},
                                            expertkit::ExpertSpec{MEMRA_QTYPE_BF16, MEMRA_QTYPE_Q6_K, MEMRA_QTYPE_IQ4_XS, 1, 1, 1, -0.3f}},
                                           1024, 512, seed);
    };
    auto token = [](const testkit::TokenProblem &p, const std::vector<CpuExpertV2> &experts, int32_t threads) {
        std::vector<float> out(p.input.size());
        moe_token(registry(), experts.data(), int32_t(experts.size()), p.input.data(), out.data(), threads);
        return out;
    };

    // A spread team (both fake nodes have an allowed CPU), against the memory path's bits.
    const testkit::TokenProblem spread = problem(11);
    std::vector<CpuExpertV2> spread_experts = spread.experts.descriptors();
    const std::vector<CpuExpertV2> in_memory = spread_experts;
    ProjectionFile spread_file(spread_experts);
    const std::vector<float> want = token(spread, in_memory, 1);
    const std::vector<float> got = token(spread, spread_experts, 2);
    EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)), 0) << "placement changed a bit";
    if (!two_cpus) {  // one fake node has no allowed CPU: the flat team, nothing placed
        EXPECT_EQ(placed_on(0) + placed_on(1), 0u);
        return;
    }
    std::vector<uint64_t> expected = check_entries(spread_experts, 2, -1);
    EXPECT_GT(expected[0], 0u);
    EXPECT_GT(expected[1], 0u);
    EXPECT_EQ(placed_on(0), expected[0]);
    EXPECT_EQ(placed_on(1), expected[1]);

    // The prefetch worker, hinted by this thread (whose last call was spread over both nodes).
    const testkit::TokenProblem hinted = problem(12);
    std::vector<CpuExpertV2> hinted_experts = hinted.experts.descriptors();
    ProjectionFile hinted_file(hinted_experts);
    std::vector<CpuProjectionV2> projections;
    uint64_t hinted_bytes = 0;
    for (const CpuExpertV2 &e : hinted_experts)
        for (const CpuProjectionV2 *p : {&e.gate, &e.up, &e.down}) {
            projections.push_back(*p);
            hinted_bytes += p->byte_len;
        }
    const uint64_t resident = stats().resident_bytes.load();
    library.prefetcher().enqueue(projections.data(), int32_t(projections.size()));
    for (int i = 0; i < 2000 && stats().resident_bytes.load() < resident + hinted_bytes; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_EQ(stats().resident_bytes.load(), resident + hinted_bytes) << "the hints never became resident";
    const std::vector<uint64_t> prefetched = check_entries(hinted_experts, 2, -1);
    EXPECT_EQ(placed_on(0), expected[0] + prefetched[0]);
    EXPECT_EQ(placed_on(1), expected[1] + prefetched[1]);

    // An executor pinned to fake node 1 (CPU 1): a team on one node, every entry whole on it.
    const testkit::TokenProblem pinned = problem(13);
    std::vector<CpuExpertV2> pinned_experts = pinned.experts.descriptors();
    const std::vector<CpuExpertV2> pinned_memory = pinned_experts;
    ProjectionFile pinned_file(pinned_experts);
    std::vector<float> pinned_got;
    std::thread executor([&] {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(1, &one);
        ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
        pinned_got = token(pinned, pinned_experts, 2);
    });
    executor.join();
    const std::vector<float> pinned_want = token(pinned, pinned_memory, 1);
    EXPECT_EQ(std::memcmp(pinned_want.data(), pinned_got.data(), pinned_want.size() * sizeof(float)), 0);
    const std::vector<uint64_t> whole = check_entries(pinned_experts, 1, 1);
    EXPECT_EQ(placed_on(0), expected[0] + prefetched[0]);
    EXPECT_EQ(placed_on(1), expected[1] + prefetched[1] + whole[1]);

    // The same executor's mask changed between calls (as a CPU taken offline changes it): the next
    // call sees its new node, and its entries go there.
    const testkit::TokenProblem moved = problem(14);
    std::vector<CpuExpertV2> moved_experts = moved.experts.descriptors();
    ProjectionFile moved_file(moved_experts);
    std::thread mover([&] {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(1, &one);
        ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
        (void)token(pinned, pinned_experts, 2);  // cached already: nothing placed
        CPU_ZERO(&one);
        CPU_SET(0, &one);
        ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
        (void)token(moved, moved_experts, 2);
    });
    mover.join();
    const std::vector<uint64_t> refreshed = check_entries(moved_experts, 1, 0);
    EXPECT_EQ(placed_on(0), expected[0] + prefetched[0] + refreshed[0]);
    EXPECT_EQ(placed_on(1), expected[1] + prefetched[1] + whole[1]);

    // The describe line reports the counts by node id.
    const std::string line = describe_placement(library.numa());
    EXPECT_EQ(line, "; cache placed on node 0 " + std::to_string(placed_on(0)) + " bytes, node 1 " +
                        std::to_string(placed_on(1)) + " bytes");
}

}  // namespace
}  // namespace memra
