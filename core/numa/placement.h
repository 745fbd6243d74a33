// Memory placed on NUMA nodes, and asked where it is (docs/numa.md, "Memory placement").
//
// The weight cache's entries are placed with mbind(MPOL_PREFERRED, MPOL_MF_MOVE) page range by
// page range: preferred, never strict (a node that is full gives pages elsewhere instead of
// failing the process), and MOVE because the cache's chunks are faulted in ahead of use (slab
// prefaulting, slab_pool.h), so a policy alone would leave their pages where they are. A chunk
// reused for the same team shape is already where it is asked to be and nothing moves.
//
// Faults degrade to today's behaviour: the first refusal of mbind (EPERM, EINVAL, ENOSYS: a
// seccomp filter, a kernel without NUMA) turns placement off for the process with one log line;
// a node without memory, or whose memory the process may not use, gets no placement (its rows
// land where the kernel puts them) and one log line. Placement never changes a byte: only where
// the pages are.
//
// Raw system calls (mbind, move_pages through syscall()), as topology.h explains.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memra {

struct NumaMachine;

// The most nodes the library places on (node indices in NumaMachine::nodes below this).
constexpr int32_t kMaxPlacedNodes = 64;

// The mbind system call's signature; tests replace it to refuse (set_mbind_for_tests).
using MbindFn = long (*)(void *addr, unsigned long len, int mode, const unsigned long *nodemask,
                         unsigned long maxnode, unsigned flags);
// nullptr: the real system call again. Also forgets an earlier refusal (tests only).
void set_mbind_for_tests(MbindFn fn);

// Whether the library places memory on `machine`: NUMA on, more than one node, no memory policy
// of the process's own (numactl's is never overridden), no refusal of mbind so far.
bool placement_on(const NumaMachine &machine);

// Asks the kernel to keep [data, data + bytes) on the memory of `node` (an index in
// machine.nodes), preferred, moving pages that are elsewhere. `data` page-aligned, `bytes` a
// multiple of the page size (a cache chunk's pages). False when nothing was asked (a node
// without usable memory, placement off) or mbind refused (then placement is off from now on);
// each kind of fault logs one line, once, when the load log is on (`log`).
bool place_pages(const NumaMachine &machine, uint8_t *data, size_t bytes, int32_t node, bool log);

// Rows [bounds[g], bounds[g + 1]) of a matrix of `row_bytes` per row at `data` (a page-aligned
// chunk of `chunk_bytes`) on node nodes[g], for g in [0, groups): the pages are dealt by where
// they start (a page holding rows of two groups goes to the group whose rows it starts in; the
// chunk's tail after the last row to the last group). Adds to bytes_on_node[nodes[g]] the bytes
// placed for each group (page-rounded); nothing for a group whose pages were not placed.
void place_rows(const NumaMachine &machine, uint8_t *data, size_t chunk_bytes, size_t row_bytes, const int32_t *bounds,
                const int32_t *nodes, int32_t groups, uint64_t *bytes_on_node, bool log);

// One matrix (a cache chunk) placed for a team: with `groups` > 1 as place_rows says, else, with
// `home_node` >= 0 (a team on one node of several), the whole chunk on that node; nothing
// otherwise. Adds the bytes placed per node to bytes_on_node.
void place_matrix(const NumaMachine &machine, uint8_t *data, size_t chunk_bytes, size_t row_bytes,
                  const int32_t *bounds, const int32_t *nodes, int32_t groups, int32_t home_node,
                  uint64_t *bytes_on_node, bool log);

// The real node of the page holding `addr` (move_pages with no target), or -errno (-ENOENT: not
// faulted in, -EFAULT: not mapped, -ENOSYS: no NUMA in the kernel).
int32_t page_node(const void *addr);

}  // namespace memra
