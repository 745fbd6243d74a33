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

}  // namespace memra
