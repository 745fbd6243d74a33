// The order in which a call's team takes its work when the call's file reads overlap its compute
// (CallWeights::begin, weight_source.h): the tiles in their usual order (gate/up tiles, then down
// tiles), with the pending reads put in between, each before the first tile that needs its bytes
// and about one expert ahead of it, so that while some members read the next expert's weights
// the others compute on the bytes already in. The call's waits for other readers come after all
// of its own reads (so two calls never wait on each other), and every item comes after the items
// it waits for: with the team's in-order hand-out, whatever an item waits for has been taken by
// a member that is not waiting, for any team size (one member included).
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "compute/call_plan.h"

namespace memra {

// The pending items (CallWeights::begin): `own` reads of the call's own, then waits for other
// readers up to `all`; expert_of(i) is the plan's index of item i's expert (the reads in plan
// order). items[k] >= 0: tile items[k] (gate/up tiles first, then down tiles, as the executor
// numbers them); items[k] < 0: pending item -1 - items[k].
void schedule_items(const CallPlan &plan, size_t own, size_t all, const std::function<size_t(size_t)> &expert_of,
                    std::vector<long> &items);

}  // namespace memra
