// The order a call's team takes its reads and tiles in when the reads overlap compute
// (core/compute/read_schedule.h): every item once, tiles in their usual order, each tile after
// the items that bring its expert's bytes, the call's own reads before its waits for other
// readers, and reads only about one expert ahead of the tiles (or nothing would overlap).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "compute/read_schedule.h"

namespace memra {
namespace {

// A plan of `experts` experts with `tiles` gate/up tiles and `tiles` down tiles each.
CallPlan plan_of(int32_t experts, int32_t tiles) {
    CallPlan plan;
    plan.experts.resize(size_t(experts));
    for (int32_t e = 0; e < experts; ++e)
        for (int32_t t = 0; t < tiles; ++t) plan.gate_up_tiles.push_back({e, t * 8, t * 8 + 8});
    for (int32_t e = 0; e < experts; ++e)
        for (int32_t t = 0; t < tiles; ++t) plan.down_tiles.push_back({e, t * 8, t * 8 + 8});
    return plan;
}

struct Pending {
    std::vector<size_t> expert;  // of each item: own reads (in plan order), then waits
    size_t own = 0;
};

std::vector<long> schedule(const CallPlan &plan, const Pending &p) {
    std::vector<long> items;
    schedule_items(plan, p.own, p.expert.size(), [&](size_t i) { return p.expert[i]; }, items);
    return items;
}

// The checks every schedule must pass; returns the position of each pending item.
std::vector<size_t> check_schedule(const CallPlan &plan, const Pending &p, const std::vector<long> &items) {
    const size_t tiles = plan.gate_up_tiles.size() + plan.down_tiles.size();
    EXPECT_EQ(items.size(), tiles + p.expert.size());
    std::vector<size_t> at(p.expert.size(), SIZE_MAX);
    long last_tile = -1;
    for (size_t k = 0; k < items.size(); ++k) {
        if (items[k] >= 0) {
            EXPECT_EQ(items[k], last_tile + 1) << "tiles out of order at " << k;
            last_tile = items[k];
            continue;
        }
        const size_t i = size_t(-1 - items[k]);
        EXPECT_LT(i, p.expert.size());
        if (i >= p.expert.size()) continue;
        EXPECT_EQ(at[i], SIZE_MAX) << "pending item " << i << " twice";
        at[i] = k;
    }
    EXPECT_EQ(size_t(last_tile + 1), tiles);
    for (size_t i = 0; i < p.expert.size(); ++i) EXPECT_NE(at[i], SIZE_MAX) << "pending item " << i << " missing";
    // Own reads in order, and all of them before any wait.
    for (size_t i = 1; i < p.expert.size(); ++i) EXPECT_LT(at[i - 1], at[i]) << "item " << i;
    // Each tile after every item of its expert (and a tile whose expert waits, after all reads).
    for (size_t k = 0; k < items.size(); ++k) {
        if (items[k] < 0) continue;
        const size_t n_gu = plan.gate_up_tiles.size();
        const Tile &t = size_t(items[k]) < n_gu ? plan.gate_up_tiles[size_t(items[k])] : plan.down_tiles[size_t(items[k]) - n_gu];
        for (size_t i = 0; i < p.expert.size(); ++i) {
            if (p.expert[i] != size_t(t.expert)) continue;
            EXPECT_LT(at[i], k) << "tile " << items[k] << " before item " << i;
        }
    }
    return at;
}

TEST(ReadSchedule, OwnReadsRunAboutOneExpertAheadOfTheTiles) {
    const CallPlan plan = plan_of(6, 3);
    Pending p;
    for (size_t e = 0; e < 6; ++e) p.expert.insert(p.expert.end(), {e, e, e});
    p.own = p.expert.size();
    const std::vector<long> items = schedule(plan, p);
    const std::vector<size_t> at = check_schedule(plan, p, items);
    // Expert e's first gate/up tile comes before the reads of expert e + 2: compute starts while
    // later experts are still to be read.
    for (size_t e = 0; e + 2 < 6; ++e) {
        const size_t first_tile = size_t(std::find(items.begin(), items.end(), long(e * 3)) - items.begin());
        EXPECT_LT(first_tile, at[(e + 2) * 3]) << "expert " << e;
    }
    EXPECT_EQ(items[0], -1) << "the first expert's reads come first";
}

TEST(ReadSchedule, WaitsForOtherReadersComeAfterAllOwnReads) {
    const CallPlan plan = plan_of(4, 2);
    Pending p;
    // Experts 0, 1 and 3 read by this call (expert 1 only its down), expert 1's gate and up and
    // expert 2 entirely filled by other readers.
    p.expert = {0, 0, 0, 1, 3, 3, 3};
    p.own = p.expert.size();
    p.expert.insert(p.expert.end(), {1, 1, 2, 2, 2});
    const std::vector<long> items = schedule(plan, p);
    const std::vector<size_t> at = check_schedule(plan, p, items);
    for (size_t k = 0; k < items.size(); ++k) {
        if (items[k] != 2) continue;
        EXPECT_GT(k, at[p.own - 1]) << "expert 1's first tile before the last own read";
    }
}

TEST(ReadSchedule, SomeProjectionsAlreadyResolved) {
    const CallPlan plan = plan_of(5, 4);
    Pending p;
    p.expert = {1, 4, 4};  // the others hit in the cache or live in memory
    p.own = 2;
    check_schedule(plan, p, schedule(plan, p));
    p.expert.clear();
    p.own = 0;
    const std::vector<long> items = schedule(plan, p);
    check_schedule(plan, p, items);
}

}  // namespace
}  // namespace memra
