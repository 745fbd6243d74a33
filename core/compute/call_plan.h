// A compute call as data. Both entry points evaluate (experts x m activation rows): the token call
// is count experts x 1 row, the rows call 1 expert x m rows. Each builds a CallPlan (plan_call:
// the kernel of every projection, the scratch layout, the tiles) and hands it to the one executor
// (execute.h), so planning, tiling, scheduling and SwiGLU exist once.
//
// The plan is complete before anything runs: projections in the caller's memory carry their
// pointer from the start, file-backed ones receive theirs from CallWeights (weight_source.h), the
// only other writer of a plan: before the tiles run (resolve), or while they run, each pointer
// then published through its projection's `ready` (begin, fetch).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "memra/backend.h"
#include "memra_cpu_experts_v2.h"
#include "compute/scratch.h"
#include "numa/page_nodes.h"

namespace memra {

class BackendRegistry;

// An expert's three projections, in the order the ABI's CpuExpertV2 holds them.
enum ProjectionKind : int32_t { kGate = 0, kUp = 1, kDown = 2, kProjectionKinds = 3 };

// "gate", "up", "down".
const char *projection_name(int32_t kind);

// The one spelling of a projection (or expert) in messages: "expert 3 gate" ("expert 3" for
// projection nullptr). `expert` < 0 is the rows call's single expert: "expert gate".
std::string expert_label(int32_t expert, const char *projection = nullptr);

// A file-backed projection being read while the call computes (CallWeights::begin): `weights` is
// valid once `*ready` is kBytesIn (stored with release order after it), and never when kReadFailed.
enum ReadState : int32_t { kBytesPending = 0, kBytesIn = 1, kReadFailed = 2 };

struct PlannedProjection {
    const CpuProjectionV2 *source = nullptr;
    const uint8_t *weights = nullptr;  // nullptr until resolved, for a file-backed projection
    const std::atomic<int32_t> *ready = nullptr;  // ReadState; nullptr: `weights` is resolved already
    size_t row_bytes = 0;
    int32_t in = 0, out = 0;
    float scale = 1.0f;
    // Serving this call's path: gemv (m == 1) or gemm. The bytes at `weights` are in its layout.
    const memra_kernel_v2 *kernel = nullptr;
};

struct ExpertPlan {
    PlannedProjection projection[kProjectionKinds];
    float route_weight = 0.0f;
    // Offsets into the call's scratch buffer; each region holds m rows.
    size_t gate_out = 0, up_out = 0, h = 0, hq = 0, down_out = 0;
    size_t hq_stride = 0;  // bytes of one row of the quantized h

    const PlannedProjection &gate() const { return projection[kGate]; }
    const PlannedProjection &up() const { return projection[kUp]; }
    const PlannedProjection &down() const { return projection[kDown]; }
};

// A tile is the unit of parallel work: a run of consecutive output rows of one expert's matrix
// (gate and up together, or down), applied to all m activation rows.
struct Tile {
    int32_t expert;
    int32_t row_begin, row_end;
    int32_t group = 0;  // the team group (NUMA node) whose rows these are (team_layout.h)
};

struct CallPlan {
    int32_t m = 1;                     // activation rows
    bool single = false;               // the rows call's one expert: named "expert", not "expert 0"
    const float *row_weights = nullptr;  // per activation row (rows call); else each expert's route_weight
    int32_t n_in = 0, n_out = 0;
    std::vector<ExpertPlan> experts;
    // The activations in each format the gate/up kernels consume, quantized once per call and
    // shared by every expert (all see the same x): m rows of x_stride[f] bytes at x_offset[f].
    bool x_needed[MEMRA_ACT_FORMAT_COUNT] = {};
    size_t x_offset[MEMRA_ACT_FORMAT_COUNT] = {};
    size_t x_stride[MEMRA_ACT_FORMAT_COUNT] = {};
    size_t scratch_bytes = 0;
    std::vector<Tile> gate_up_tiles, down_tiles;

    int32_t label_index(size_t expert) const { return single ? -1 : static_cast<int32_t>(expert); }
};

// Plans `count` experts over `m` activation rows: kernels (status 5 naming the projection when no
// loaded backend serves its qtype or quantizes its activations; planned_kernel, `file_cache`
// saying whether the weight cache is on), scratch offsets. Weights in the caller's memory are
// resolved here; file-backed ones are left for CallWeights, which puts them in the layout of the
// planned kernel. `row_weights`: the rows call's per-row route weights (single expert), else
// nullptr.
void plan_call(const BackendRegistry &registry, const CpuExpertV2 *experts, int32_t count, int32_t m,
               const float *row_weights, CallPlan &plan, bool file_cache = false);

// The tiles of every planned expert for a team of at most `members` threads. Each tile starts at a
// multiple of its kernels' row_group (a repacked matrix is handed to its kernel in whole groups;
// gate and up share their tiles, so both of theirs count). A team spread over `groups` groups
// (NUMA nodes, team_layout.h) of `group_members` each gets every matrix's rows split between the
// groups in proportion to their members, at such multiples (split_rows), each group's rows cut
// into tiles of its own; the tiles stay in the flat team's order (by expert, then by row).
void cut_tiles(CallPlan &plan, int32_t members, const int32_t *group_members = nullptr, int32_t groups = 1);

// Where the engine's pages are (numa/page_nodes.h) for a projection in memory: `sample` answers
// for a matrix (tests answer for made-up placements).
using SamplePagesFn = PageSamples (*)(const uint8_t *data, size_t bytes);

// A team spread over `groups` groups whose memory is real node group_memory_node[g]: each tile of
// a projection in the caller's memory (gate/up tiles by the gate's pages) goes to the group whose
// memory holds its rows' middle byte, by the samples, when that is not its group already (the
// first such group; none: it stays). Who computes a tile never changes a bit, and each group's
// items stay in the flat order (execute.cpp), so only where the bytes are read from changes.
void follow_memory_pages(CallPlan &plan, const int32_t *group_memory_node, int32_t groups, SamplePagesFn sample);

// The row multiple of tiles whose rows kernels `a` and `b` read (gate and up share their tiles;
// down passes its kernel twice): kTileRowMultiple and both kernels' row_group (nullptr: ggml's
// layout, 1). Every tile, and every group's rows, start at a multiple of it.
int32_t tile_row_multiple(const memra_kernel_v2 *a, const memra_kernel_v2 *b);

// The rows of expert `expert`'s projection `kind` that each of `groups` groups computes, from the
// cut tiles: group g's are [bounds[g], bounds[g + 1]) (the split cut_tiles made; bounds[0] = 0,
// bounds[groups] = the projection's rows).
void group_row_bounds(const CallPlan &plan, size_t expert, int32_t kind, int32_t groups, int32_t *bounds);

}  // namespace memra
