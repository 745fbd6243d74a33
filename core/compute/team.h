// The threads of one compute call: the calling thread and up to `size - 1` helper threads of its
// own, which take the call's work items in increasing order, one at a time (a dynamic schedule).
//
// Why not OpenMP (which this replaced): libgomp ends the process when it cannot create a thread
// ("libgomp: Thread creation failed", when an address-space or thread limit is reached), and in a
// child made by fork() after a parallel region it waits forever for a team whose threads exist
// only in the parent. A library must do neither to its host. Here a helper that cannot be started
// is simply not there (the call runs with those that are, down to the caller alone; results never
// depend on the team size), and a forked child's first call that wants helpers starts its own.
//
// Helpers belong to the calling thread, as libgomp's pools did: started by its first call that
// wants them, kept for its next calls, joined when it exits. Calls on different threads never
// share or wait for each other's helpers. Helpers inherit the caller's CPU affinity and block every
// signal (signals stay with the engine's threads). Between calls a helper spins briefly for the
// next one, then sleeps.
#pragma once

#include <sched.h>

#include <cstdint>

namespace memra {

// Runs work(context, i) for every i in [0, count) on the calling thread and up to `size - 1`
// helpers, and returns when all are done. `work` must not throw. Never fails: without helpers the
// caller does everything.
void run_team(int32_t size, long count, void (*work)(void *context, long i), void *context);

template <class Work>
void run_team(int32_t size, long count, Work &work) {
    run_team(size, count, [](void *context, long i) { (*static_cast<Work *>(context))(i); }, &work);
}

// Starts helpers until the calling thread has `wanted` (or one cannot be started); returns how
// many it has, at most `wanted`. run_team_groups hands work to exactly these.
int32_t team_helpers(int32_t wanted);

// One group of a team spread over NUMA nodes (compute/team_layout.h): its items, its helpers and
// the CPUs they run on.
struct TeamGroup {
    const long *items = nullptr;  // values handed to work(), taken in this order
    long count = 0;
    int32_t helpers = 0;          // this group's helpers (the caller's group counts the caller apart)
    const cpu_set_t *cpus = nullptr;
    int32_t node = 0;             // with the call's pin_key, names `cpus`
};

// The team of run_team, spread over groups: the calling thread's first team_helpers() helpers are
// dealt to the groups in order (group 0's first), each pinned to its group's CPUs, and each member
// takes its own group's items in order, then the other groups' (a group whose members finish early
// helps the others: a member computes whole tiles, so who computes one never changes a bit).
// (`pin_key`, a group's `node`) names its CPU set (the same pair, the same set): a helper is
// re-pinned only when that pair changes, so a steady stream of calls makes no system call here. Every
// group must have at least one member, or its items wait for the others to finish their own.
void run_team_groups(const TeamGroup *groups, int32_t count, int32_t caller_group, uint64_t pin_key,
                     void (*work)(void *context, long item), void *context);

template <class Work>
void run_team_groups(const TeamGroup *groups, int32_t count, int32_t caller_group, uint64_t pin_key, Work &work) {
    run_team_groups(groups, count, caller_group, pin_key,
                    [](void *context, long item) { (*static_cast<Work *>(context))(item); }, &work);
}

}  // namespace memra
