#include "compute/read_schedule.h"

#include <algorithm>
#include <cstdint>

namespace memra {
namespace {

// Reads scheduled this many experts ahead of the tiles that need them. One: on two cores a team
// of two then has one member reading expert i + 1 while the other computes expert i.
constexpr size_t kExpertsAhead = 1;

}  // namespace

void schedule_items(const CallPlan &plan, size_t own, size_t all, const std::function<size_t(size_t)> &expert_of,
                    std::vector<long> &items) {
    items.clear();
    items.reserve(plan.gate_up_tiles.size() + plan.down_tiles.size() + all);
    size_t first_waiting = SIZE_MAX;  // the first expert with a projection another reader fills
    for (size_t i = own; i < all; ++i) first_waiting = std::min(first_waiting, expert_of(i));
    size_t next = 0;  // the next pending item not scheduled yet
    auto take = [&](size_t until) {
        while (next < until) items.push_back(-1 - static_cast<long>(next++));
    };
    auto before_tile_of = [&](size_t expert) {
        size_t until = next;
        while (until < own && expert_of(until) <= expert + kExpertsAhead) ++until;
        take(until);
        if (expert >= first_waiting) take(all);  // its own reads all first, then the waits
    };
    long tile = 0;
    for (const Tile &t : plan.gate_up_tiles) {
        before_tile_of(static_cast<size_t>(t.expert));
        items.push_back(tile++);
    }
    for (const Tile &t : plan.down_tiles) {
        before_tile_of(static_cast<size_t>(t.expert));
        items.push_back(tile++);
    }
    take(all);
}

}  // namespace memra
