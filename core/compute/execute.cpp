#include "compute/execute.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <thread>

#include "dispatch/backend_registry.h"
#include "library.h"
#include "compute/read_schedule.h"
#include "compute/scratch.h"
#include "stats.h"
#include "compute/team.h"
#include "compute/team_layout.h"
#include "numa/page_nodes.h"
#include "numa/placement.h"
#include "numa/topology.h"
#include "weights/weight_source.h"

namespace memra {
namespace {

// Row-sized pieces of serial work (quantizing the call's input rows, an expert's h rows) that any
// team member may share: items [0, total) are handed out one at a time, and whoever needs the
// result takes items until none is left, then waits for those still being done. Done by one
// thread, as before, they were a serial step of m quantizations between the tile phases that the
// rest of the team waited through: on 16 threads a 32-row call's share grew with the team.
struct SharedRows {
    std::atomic<int32_t> next{0}, done{0};
    int32_t total = 0;

    void reset(int32_t items) {
        next.store(0, std::memory_order_relaxed);
        done.store(0, std::memory_order_relaxed);
        total = items;
    }
    bool finished() const { return done.load(std::memory_order_acquire) >= total; }
    template <class Work>
    void help(Work &&work) {
        for (int32_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < total;) {
            work(i);
            done.fetch_add(1, std::memory_order_release);
        }
    }
    void wait() const {
        for (int spins = 0; !finished(); ++spins)
            if (spins >= 64) std::this_thread::yield();
    }
};

// One expert's way through a call: its gate/up tiles not yet done, whether its h is complete,
// and the quantization of its h rows (the down tiles' input).
struct ExpertProgress {
    std::atomic<int32_t> gate_up_left{0};
    std::atomic<bool> h_ready{false};
    SharedRows hq_rows;
};

// Everything a call needs beyond the caller's buffers and its plan, reused by the next call on
// this thread.
struct Workspace {
    SharedRows x_rows;  // the input rows, once per activation format the gate/up kernels consume
    std::unique_ptr<ExpertProgress[]> progress;
    size_t progress_capacity = 0;
    AlignedBuffer scratch;
    AlignedBuffer file_weights;
};

Workspace &thread_workspace() {
    thread_local Workspace ws;
    return ws;
}

// Progress counters for the planned experts and their gate/up tiles.
ExpertProgress *reset_progress(Workspace &ws, const CallPlan &plan) {
    const size_t experts = plan.experts.size();
    if (ws.progress_capacity < experts) {
        ws.progress.reset(new ExpertProgress[experts]);
        ws.progress_capacity = experts;
    }
    for (size_t i = 0; i < experts; ++i) {
        ws.progress[i].gate_up_left.store(0, std::memory_order_relaxed);
        ws.progress[i].h_ready.store(false, std::memory_order_relaxed);
        ws.progress[i].hq_rows.reset(plan.m);
    }
    for (const Tile &t : plan.gate_up_tiles)
        ws.progress[t.expert].gate_up_left.fetch_add(1, std::memory_order_relaxed);
    return ws.progress.get();
}

// The items of a call without reads: its tiles, in order.
void fill_identity(std::vector<long> &items, long count) {
    items.resize(static_cast<size_t>(count));
    for (long i = 0; i < count; ++i) items[static_cast<size_t>(i)] = i;
}

// The call's items (tile indices, -1 - read) dealt to the layout's groups, each group's in the
// call's order: a tile to the group of its rows, the reads in turn. Reused by the thread's calls.
const TeamGroup *deal_to_groups(const std::vector<long> &items, const TeamLayout &layout, const CallPlan &plan) {
    thread_local std::vector<std::vector<long>> lists;
    thread_local std::vector<TeamGroup> groups;
    const size_t n = static_cast<size_t>(layout.groups);
    if (lists.size() < n) lists.resize(n);
    groups.resize(n);
    for (size_t g = 0; g < n; ++g) lists[g].clear();
    const long n_gu = static_cast<long>(plan.gate_up_tiles.size());
    size_t next_reader = 0;
    for (long v : items) {
        size_t g;
        if (v < 0)
            g = next_reader++ % n;
        else
            g = static_cast<size_t>(v < n_gu ? plan.gate_up_tiles[static_cast<size_t>(v)].group
                                             : plan.down_tiles[static_cast<size_t>(v - n_gu)].group);
        lists[g].push_back(v);
    }
    for (size_t g = 0; g < n; ++g) {
        groups[g].items = lists[g].data();
        groups[g].count = static_cast<long>(lists[g].size());
        groups[g].helpers = layout.group_members[g] - (static_cast<int32_t>(g) == layout.caller_group ? 1 : 0);
        groups[g].cpus = &layout.group_cpus[g];
        groups[g].node = layout.group_node[g];
    }
    return groups.data();
}

void wait_until_set(const std::atomic<bool> &flag) {
    for (int spins = 0; !flag.load(std::memory_order_acquire); ++spins)
        if (spins >= 64) std::this_thread::yield();
}

// silu(s_g * g) * (s_u * u), silu(t) = t / (1 + e^-t), elementwise over a run of rows.
void swiglu(const float *g, const float *u, float gate_scale, float up_scale, float *h, int32_t n) {
    for (int32_t i = 0; i < n; ++i) {
        const float t = gate_scale * g[i];
        h[i] = (t / (1.0f + std::exp(-t))) * (up_scale * u[i]);
    }
}

// The one place the tile loop takes a projection's weights: one still being read (its reads
// overlap the call's compute, read_schedule.h) is waited for here, as a down tile waits for its
// h. nullptr when its read failed: the tile is skipped (the call then computes again or fails).
const uint8_t *weights_of(const PlannedProjection &p) {
    if (!p.ready) return p.weights;
    int32_t state;
    for (int spins = 0; (state = p.ready->load(std::memory_order_acquire)) == kBytesPending; ++spins)
        if (spins >= 64) std::this_thread::yield();
    return state == kBytesIn ? p.weights : nullptr;
}

// y[j * ldy + r] = dot(row r, x_j) over the tile's rows r and the m activation rows j (x_j at
// x + j * x_stride): gemv for one row, else gemm, which decodes each weight block once for all m.
// False, computing nothing, when the weights' read failed.
bool apply(const PlannedProjection &p, const Tile &tile, const uint8_t *x, size_t x_stride, int32_t m,
           float *y, size_t ldy) {
    const int32_t rows = tile.row_end - tile.row_begin;
    const uint8_t *weights = weights_of(p);
    if (!weights) return false;
    const uint8_t *w = weights + static_cast<size_t>(tile.row_begin) * p.row_bytes;
    if (m == 1)
        p.kernel->gemv(w, p.row_bytes, rows, p.in, x, y + tile.row_begin);
    else
        p.kernel->gemm(w, p.row_bytes, rows, p.in, x, x_stride, m, y + tile.row_begin, ldy);
    return true;
}

// The gate/up tiles, then the down tiles, in ONE dynamic loop (team.h). Three loops with a
// barrier each (OpenMP's, when this was written) made the team wait at every barrier for a member
// that had lost its core to another process, while the waiters' active wait kept their cores
// busy: 2-thread token calls ran ~2x slower whenever the machine was shared. Here a gate/up tile
// first helps quantize the input rows (once per call), whoever finishes an expert's last gate/up
// tile starts quantizing its h rows, and a down tile waits (yielding its core) only for its own
// expert's h, helping with its rows first. Tiles are handed out in index order, so whatever a
// tile waits for is already taken by a thread that is not waiting. Every value is still computed
// by the same operations whatever the team size.
// `reads`: the call's reads still to be made (CallWeights::begin), run as items between the tiles
// (read_schedule.h); nullptr when every weight is resolved. Once one of them failed, tiles compute
// nothing more that could read garbage (the call computes again, or fails, afterwards).
// A team spread over NUMA nodes (layout.groups > 1) runs the same items in the same order, dealt
// to the groups: each tile to the group whose rows it holds, the reads in turn (team.h,
// run_team_groups; every group has a member, so nothing waits for a group nobody serves).
void run_tiles(const BackendRegistry &registry, const CallPlan &plan, const float *inputs, uint8_t *base,
               float *outputs, const TeamLayout &layout, Workspace &ws, CallWeights *reads) {
    const int32_t members = layout.members;
    const Tile *gu = plan.gate_up_tiles.data();
    const Tile *d = plan.down_tiles.data();
    const long n_gu = static_cast<long>(plan.gate_up_tiles.size());
    const long n_d = static_cast<long>(plan.down_tiles.size());
    const int32_t team = static_cast<int32_t>(std::min<long>(members, std::max<long>(1, std::max(n_gu, n_d))));
    ExpertProgress *progress = reset_progress(ws, plan);
    const ExpertPlan *experts = plan.experts.data();
    const int32_t m = plan.m;
    const size_t rows = static_cast<size_t>(m), n_out = static_cast<size_t>(plan.n_out);
    auto f32 = [base](size_t offset) { return reinterpret_cast<float *>(base + offset); };

    // The input: item i is row i % m in the (i / m)-th activation format the call needs.
    int32_t x_formats[MEMRA_ACT_FORMAT_COUNT], n_x_formats = 0;
    for (int32_t f = 0; f < MEMRA_ACT_FORMAT_COUNT; ++f)
        if (plan.x_needed[f]) x_formats[n_x_formats++] = f;
    ws.x_rows.reset(n_x_formats * m);
    auto quantize_x = [&](int32_t i) {
        const int32_t f = x_formats[i / m];
        const size_t r = static_cast<size_t>(i % m);
        registry.quantizer_for(f)(inputs + r * static_cast<size_t>(plan.n_in), plan.n_in,
                                  base + plan.x_offset[f] + r * plan.x_stride[f]);
    };

    // Gate and up fused: one tile reads the same quantized x for both.
    auto gate_up = [&](const Tile &tile) {
        const ExpertPlan &e = experts[tile.expert];
        const size_t ff = static_cast<size_t>(e.gate().out);
        const int32_t fg = e.gate().kernel->act_format, fu = e.up().kernel->act_format;
        float *g = f32(e.gate_out), *u = f32(e.up_out), *h = f32(e.h);
        if (!apply(e.gate(), tile, base + plan.x_offset[fg], plan.x_stride[fg], m, g, ff) ||
            !apply(e.up(), tile, base + plan.x_offset[fu], plan.x_stride[fu], m, u, ff))
            return;
        for (size_t r = 0; r < rows; ++r)
            swiglu(g + r * ff + tile.row_begin, u + r * ff + tile.row_begin, e.gate().scale, e.up().scale,
                   h + r * ff + tile.row_begin, tile.row_end - tile.row_begin);
    };
    auto quantize_h_rows = [&](int32_t expert) {
        const ExpertPlan &e = experts[expert];
        const QuantizeFn quantize = registry.quantizer_for(e.down().kernel->act_format);
        const size_t ff = static_cast<size_t>(e.down().in);
        progress[expert].hq_rows.help([&](int32_t r) {
            quantize(f32(e.h) + static_cast<size_t>(r) * ff, e.down().in, base + e.hq + static_cast<size_t>(r) * e.hq_stride);
        });
    };
    auto down = [&](const Tile &tile) {
        const ExpertPlan &e = experts[tile.expert];
        float *y = f32(e.down_out);
        // The token call's sum over experts waits for all of them.
        if (!apply(e.down(), tile, base + e.hq, e.hq_stride, m, y, n_out) || !plan.row_weights) return;
        // The rows call's one expert: its outputs, row by row, as the token call's sum for one
        // expert computes them (0 + w * (s_d * y) == w * (s_d * y)), so rows and token calls agree.
        for (size_t r = 0; r < rows; ++r)
            for (size_t j = static_cast<size_t>(tile.row_begin); j < static_cast<size_t>(tile.row_end); ++j)
                outputs[r * n_out + j] = plan.row_weights[r] * (e.down().scale * y[r * n_out + j]);
    };
    auto read_failed = [reads] { return reads && reads->failed(); };
    auto one_tile = [&](long t) {
        if (t < n_gu) {
            const Tile &tile = gu[t];
            if (!ws.x_rows.finished()) {
                ws.x_rows.help(quantize_x);
                ws.x_rows.wait();
            }
            gate_up(tile);
            ExpertProgress &p = progress[tile.expert];
            if (p.gate_up_left.fetch_sub(1, std::memory_order_acq_rel) == 1) {
                p.h_ready.store(true, std::memory_order_release);
                if (!read_failed()) quantize_h_rows(tile.expert);
            }
        } else {
            const Tile &tile = d[t - n_gu];
            ExpertProgress &p = progress[tile.expert];
            wait_until_set(p.h_ready);
            // After a failed read h may lack the rows of skipped tiles. Seen unfailed here (after
            // h_ready), h is whole, and this member quantizes whatever rows nobody has taken.
            if (read_failed()) return;
            quantize_h_rows(tile.expert);
            p.hq_rows.wait();
            down(tile);
        }
    };
    const bool reading = reads && reads->pending() != 0;
    if (!reading && layout.groups == 1) {
        run_team(team, n_gu + n_d, one_tile);
        return;
    }
    thread_local std::vector<long> caller_items;
    std::vector<long> &items = caller_items;  // the caller's, also in its helpers (not theirs)
    if (reading)
        schedule_items(plan, reads->pending_reads(), reads->pending(),
                       [reads](size_t i) { return reads->pending_plan_expert(i); }, items);
    else
        fill_identity(items, n_gu + n_d);
    auto one_value = [&](long v) {
        if (v >= 0)
            one_tile(v);
        else
            reads->fetch(static_cast<size_t>(-1 - v));
    };
    if (layout.groups == 1) {
        auto one_item = [&](long k) { one_value(items[k]); };
        run_team(team, static_cast<long>(items.size()), one_item);
        return;
    }
    run_team_groups(deal_to_groups(items, layout, plan), layout.groups, layout.caller_group, layout.pin_key, one_value);
}

// The token call's outputs: the route-weighted sum of the experts' down rows in expert order,
// the same for every team size. (The rows call's outputs are written by its down tiles.)
void combine(const CallPlan &plan, const uint8_t *base, float *outputs) {
    if (plan.row_weights) return;
    const size_t n_out = static_cast<size_t>(plan.n_out);
    auto down = [&](const ExpertPlan &e, size_t r) {
        return reinterpret_cast<const float *>(base + e.down_out) + r * n_out;
    };
    for (size_t r = 0; r < static_cast<size_t>(plan.m); ++r)
        for (size_t j = 0; j < n_out; ++j) {
            float acc = 0.0f;
            for (const ExpertPlan &e : plan.experts) acc += e.route_weight * (e.down().scale * down(e, r)[j]);
            outputs[r * n_out + j] = acc;
        }
}

}  // namespace

CallPlan &thread_plan() {
    thread_local CallPlan plan;
    return plan;
}

void execute(const BackendRegistry &registry, CallPlan &plan, const float *inputs, float *outputs,
             int32_t threads, StopWatch &watch) {
    Workspace &ws = thread_workspace();
    uint8_t *base = ws.scratch.reserve(plan.scratch_bytes);
    watch.lap_into(stats().prepare_ns);
    // File-backed projections come from the weight cache, or are streamed through this thread's
    // buffer (weight_source.h); `file_weights` holds the cache pins until the call returns.
    Library &library = Library::instance();
    // begin() pins and claims; the reads themselves run between the tiles (read_schedule.h).
    CallWeights file_weights(ws.file_weights, &library.cache(), library.settings().direct_io);
    file_weights.begin(plan);
    watch.restart();  // reading is io_ns and insert_ns, not prepare_ns

    const TeamLayout &layout = layout_team(threads, library.numa());
    cut_tiles(plan, layout.members, layout.group_members, layout.groups);
    // Weights in the engine's memory: each tile to the members of the node holding its rows
    // (numa/page_nodes.h), when the groups' memory is on different real nodes (fake nodes over
    // one real node: nothing to follow, nothing asked).
    if (layout.groups > 1) {
        const NumaMachine &machine = library.numa();
        int32_t group_memory[kMaxTeamGroups];
        bool several = false;
        for (int32_t g = 0; g < layout.groups; ++g) {
            group_memory[g] = machine.nodes[static_cast<size_t>(layout.group_numa_node[g])].memory_node;
            several = several || group_memory[g] != group_memory[0];
        }
        if (several) follow_memory_pages(plan, group_memory, layout.groups, sample_pages);
    }
    // The entries this call reads into go to the nodes that compute their rows (numa/placement.h);
    // a process of one node, NUMA off, a policy of the process's own: nothing asked, as before.
    ClaimPlacement placement;
    if (file_weights.pending_reads() != 0 && (layout.groups > 1 || layout.home_node >= 0) &&
        placement_on(library.numa())) {
        placement = {&library.numa(), &plan, layout.group_numa_node, layout.groups, layout.home_node,
                     library.settings().log};
        file_weights.place_claims(&placement);
    }
    watch.lap_into(stats().prepare_ns);

    run_tiles(registry, plan, inputs, base, outputs, layout, ws, &file_weights);  // quantizes the input rows too
    // A read that failed: its error is thrown here (the outputs untouched), or the weights were
    // resolved again (a file changed under a read, a reader gave up) and the call computes again.
    if (!file_weights.finish()) run_tiles(registry, plan, inputs, base, outputs, layout, ws, nullptr);
    combine(plan, base, outputs);
    watch.lap_into(stats().compute_ns);
}

}  // namespace memra
