#include "compute/call_plan.h"

#include <algorithm>
#include <numeric>

#include "compute/team_layout.h"
#include "dispatch/backend_registry.h"
#include "error.h"
#include "memra/qtypes.h"

namespace memra {
namespace {

// Tiles are as large as balance allows: each phase's weights (all gate matrices; all down
// matrices) in about kTilesPerMember tiles per team member, between 64 KiB and 1 MiB. A thread
// reads a tile as one sequential stream and jumps at the next tile; with 2 threads taking
// alternate 64 KiB tiles (the size before) an AMD Zen 5 read 30-50% slower than with 1 MiB tiles
// (token call, 8 experts 4096 x 1536, 2 threads: q4_K 29 -> 44 GB/s, q8_0 32 -> 47, f32 47 ->
// 52; docs/benchmarks.md). 4 tiles per member leave the dynamic schedule room to even out a
// member that lost its core for a while.
// Several activation rows (gemm) make a tile's cost compute, not reading: m times the work on the
// same bytes, so a phase ends up to one tile's time after the team's fair share. Those calls cut
// kGemmTilesPerMember tiles per member, down to 16 KiB (16 rows of a 4096-wide Q4_0 matrix, rounded up).
// Threads split rows, never a row's reduction, so every value is computed the same way whatever
// the team size. Tiles start and end at multiples of 16 rows: the AVX-512 rows path takes its
// rows in VNNI panels of 16 and the AMX path in B tiles of 16 (plugins/simd/README.md), so a tile
// of 8k rows would leave 8 to the slower 8-row path; the token path's 4- and 8-row blocking
// divides 16. One multiple for both paths, so the rows a cache placement puts on a node
// (weights/prefetch.cpp) are the ones its group computes in token and rows calls alike.
constexpr size_t kMinTileBytes = 64 * 1024;
constexpr size_t kMaxTileBytes = 1024 * 1024;
constexpr size_t kTilesPerMember = 4;
constexpr size_t kGemmMinTileBytes = 16 * 1024;
constexpr size_t kGemmTilesPerMember = 8;
constexpr int32_t kTileRowMultiple = 16;

// The tile size for a phase whose matrices hold `phase_bytes` together, cut for `members` threads
// computing `m` activation rows.
size_t tile_bytes_for(size_t phase_bytes, int32_t members, int32_t m) {
    const size_t per_member = m > 1 ? kGemmTilesPerMember : kTilesPerMember;
    const size_t share = phase_bytes / (static_cast<size_t>(std::max(members, 1)) * per_member);
    return std::clamp(share, m > 1 ? kGemmMinTileBytes : kMinTileBytes, kMaxTileBytes);
}

// `multiple`: tiles start at multiples of it (kTileRowMultiple and the kernels' row groups).
int32_t tile_rows_for(size_t row_bytes, int32_t out, size_t tile_bytes, size_t multiple) {
    size_t rows = std::max<size_t>(1, tile_bytes / std::max<size_t>(row_bytes, 1));
    rows = (rows + multiple - 1) / multiple * multiple;
    return static_cast<int32_t>(std::min<size_t>(rows, static_cast<size_t>(out)));
}

// A matrix's tiles, its rows split between the groups first.
void append_tiles(std::vector<Tile> &tiles, int32_t expert, const PlannedProjection &p, size_t tile_bytes,
                  size_t multiple, const int32_t *group_members, int32_t groups) {
    const int32_t tile_rows = tile_rows_for(p.row_bytes, p.out, tile_bytes, multiple);
    int32_t bounds[kMaxTeamGroups + 1] = {0, p.out};
    if (groups > 1) split_rows(p.out, static_cast<int32_t>(multiple), group_members, groups, bounds);
    for (int32_t g = 0; g < groups; ++g)
        for (int32_t r = bounds[g]; r < bounds[g + 1]; r += tile_rows)
            tiles.push_back({expert, r, std::min(bounds[g + 1], r + tile_rows), g});
}

size_t matrix_bytes(const PlannedProjection &p) { return p.row_bytes * static_cast<size_t>(p.out); }

// Messages are built only on failure, so the steady state allocates nothing here.
PlannedProjection plan_projection(const BackendRegistry &registry, const CpuProjectionV2 &p,
                                  int32_t expert, int32_t kind, KernelPath path, bool file_cache) {
    const KernelChoice choice = planned_kernel(registry, p.qtype, path, p.file_fd >= 0, file_cache);
    if (!choice.kernel)
        fail(MEMRA_STATUS_NO_BACKEND, expert_label(expert, projection_name(kind)) +
                                          ": no loaded backend serves qtype " + memra_qtype_find(p.qtype)->name +
                                          " on the " + path_name(path) + " path");
    if (!registry.quantizer_for(choice.kernel->act_format))
        fail(MEMRA_STATUS_NO_BACKEND, expert_label(expert, projection_name(kind)) +
                                          ": no loaded backend quantizes activations to " +
                                          memra_act_format_name(choice.kernel->act_format));
    PlannedProjection out;
    out.source = &p;
    out.weights = p.file_fd >= 0 ? nullptr : p.weights;
    out.row_bytes = p.row_bytes;
    out.in = p.in_features;
    out.out = p.out_features;
    out.scale = p.scale;
    out.kernel = choice.kernel;
    return out;
}

}  // namespace

const char *projection_name(int32_t kind) {
    static const char *const kNames[kProjectionKinds] = {"gate", "up", "down"};
    return kNames[kind];
}

std::string expert_label(int32_t expert, const char *projection) {
    std::string label = expert < 0 ? std::string("expert") : "expert " + std::to_string(expert);
    if (projection) label += std::string(" ") + projection;
    return label;
}

void plan_call(const BackendRegistry &registry, const CpuExpertV2 *experts, int32_t count, int32_t m,
               const float *row_weights, CallPlan &plan, bool file_cache) {
    plan.m = m;
    plan.single = row_weights != nullptr;
    plan.row_weights = row_weights;
    plan.n_in = experts[0].gate.in_features;
    plan.n_out = experts[0].down.out_features;
    plan.experts.assign(static_cast<size_t>(count), ExpertPlan{});
    std::fill(std::begin(plan.x_needed), std::end(plan.x_needed), false);

    const size_t rows = static_cast<size_t>(m);
    const KernelPath path = m == 1 ? KernelPath::kGemv : KernelPath::kGemm;  // as execute() runs them
    ScratchLayout layout;
    for (size_t i = 0; i < plan.experts.size(); ++i) {
        ExpertPlan &e = plan.experts[i];
        const CpuProjectionV2 *src[kProjectionKinds] = {&experts[i].gate, &experts[i].up, &experts[i].down};
        for (int32_t k = 0; k < kProjectionKinds; ++k)
            e.projection[k] = plan_projection(registry, *src[k], plan.label_index(i), k, path, file_cache);
        e.route_weight = experts[i].route_weight;
        plan.x_needed[e.gate().kernel->act_format] = true;
        plan.x_needed[e.up().kernel->act_format] = true;
        const size_t n_ff = static_cast<size_t>(e.gate().out);
        e.hq_stride = memra_act_row_bytes(e.down().kernel->act_format, e.gate().out);
        e.gate_out = layout.add(rows * n_ff * sizeof(float));
        e.up_out = layout.add(rows * n_ff * sizeof(float));
        e.h = layout.add(rows * n_ff * sizeof(float));
        e.hq = layout.add(rows * e.hq_stride);
        e.down_out = layout.add(rows * static_cast<size_t>(plan.n_out) * sizeof(float));
    }
    for (int f = 0; f < MEMRA_ACT_FORMAT_COUNT; ++f) {
        if (!plan.x_needed[f]) continue;
        plan.x_stride[f] = memra_act_row_bytes(f, plan.n_in);
        plan.x_offset[f] = layout.add(rows * plan.x_stride[f]);
    }
    plan.scratch_bytes = layout.total();
}

// Gate and up share a shape; a gate/up tile's size counts the gate's bytes.
void cut_tiles(CallPlan &plan, int32_t members, const int32_t *group_members, int32_t groups) {
    if (!group_members || groups > kMaxTeamGroups) groups = 1;
    size_t gate_bytes = 0, down_bytes = 0;
    for (const ExpertPlan &e : plan.experts) {
        gate_bytes += matrix_bytes(e.gate());
        down_bytes += matrix_bytes(e.down());
    }
    const size_t gate_tile = tile_bytes_for(gate_bytes, members, plan.m),
                 down_tile = tile_bytes_for(down_bytes, members, plan.m);
    plan.gate_up_tiles.clear();
    plan.down_tiles.clear();
    for (size_t i = 0; i < plan.experts.size(); ++i) {
        const ExpertPlan &e = plan.experts[i];
        const size_t gate_up_multiple = static_cast<size_t>(tile_row_multiple(e.gate().kernel, e.up().kernel));
        append_tiles(plan.gate_up_tiles, static_cast<int32_t>(i), e.gate(), gate_tile, gate_up_multiple,
                     group_members, groups);
        append_tiles(plan.down_tiles, static_cast<int32_t>(i), e.down(), down_tile,
                     static_cast<size_t>(tile_row_multiple(e.down().kernel, e.down().kernel)), group_members, groups);
    }
}

void follow_memory_pages(CallPlan &plan, const int32_t *group_memory_node, int32_t groups, SamplePagesFn sample) {
    auto follow = [&](std::vector<Tile> &tiles, int32_t kind) {
        int32_t sampled_expert = -1;
        PageSamples samples{};
        for (Tile &t : tiles) {
            const PlannedProjection &p = plan.experts[static_cast<size_t>(t.expert)].projection[kind];
            if (!p.source || p.source->file_fd >= 0 || !p.weights) continue;  // the cache places its own
            const size_t bytes = matrix_bytes(p);
            if (t.expert != sampled_expert) {
                samples = sample(p.weights, bytes);
                sampled_expert = t.expert;
            }
            const size_t middle = (static_cast<size_t>(t.row_begin) + static_cast<size_t>(t.row_end)) / 2 * p.row_bytes;
            const int32_t node = sampled_node(samples, bytes, middle);
            if (node < 0 || group_memory_node[t.group] == node) continue;
            for (int32_t g = 0; g < groups; ++g)
                if (group_memory_node[g] == node) {
                    t.group = g;
                    break;
                }
        }
    };
    follow(plan.gate_up_tiles, kGate);
    follow(plan.down_tiles, kDown);
}

int32_t tile_row_multiple(const memra_kernel_v2 *a, const memra_kernel_v2 *b) {
    auto group = [](const memra_kernel_v2 *k) { return k ? std::max(k->row_group, 1) : 1; };
    return std::lcm(std::lcm(kTileRowMultiple, group(a)), group(b));
}

void group_row_bounds(const CallPlan &plan, size_t expert, int32_t kind, int32_t groups, int32_t *bounds) {
    const std::vector<Tile> &tiles = kind == kDown ? plan.down_tiles : plan.gate_up_tiles;
    const int32_t out = plan.experts[expert].projection[kind].out;
    bounds[0] = 0;
    std::fill(bounds + 1, bounds + groups + 1, out);
    // bounds[h] is the first row of any group >= h (a group without rows ends where it starts).
    for (const Tile &t : tiles)
        if (static_cast<size_t>(t.expert) == expert)
            for (int32_t h = std::min(t.group, groups - 1); h >= 1 && bounds[h] > t.row_begin; --h) bounds[h] = t.row_begin;
}

}  // namespace memra
