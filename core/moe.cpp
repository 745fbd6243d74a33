#include "moe.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "backend_registry.h"
#include "error.h"
#include "memra/qtypes.h"
#include "scratch.h"
#include "stats.h"
#include "team.h"
#include "weight_source.h"

namespace memra {
namespace {

// A tile is the unit of parallel work: a run of consecutive output rows of one matrix. Threads
// split rows, never a row's reduction, so every value is computed the same way whatever the
// team size: results are bit-identical for any `threads`; a multiple of 8 rows suits the SIMD
// kernels' row blocking.
//
// Tiles are as large as balance allows: each phase's weights (all gate matrices; all down
// matrices) in about kTilesPerMember tiles per team member, between 64 KiB and 1 MiB. A thread
// reads a tile as one sequential stream and jumps at the next tile; with 2 threads taking
// alternate 64 KiB tiles (the size before) an AMD Zen 5 read 30-50% slower than with 1 MiB tiles
// (token call, 8 experts 4096 x 1536, 2 threads: q4_K 29 -> 44 GB/s, q8_0 32 -> 47, f32 47 ->
// 52; docs/benchmarks.md). 4 tiles per member leave the dynamic schedule room to even out a
// member that lost its core for a while; the rows call (one expert) keeps small tiles that way.
constexpr size_t kMinTileBytes = 64 * 1024;
constexpr size_t kMaxTileBytes = 1024 * 1024;
constexpr size_t kTilesPerMember = 4;
constexpr int32_t kTileRowMultiple = 8;

struct Projection {
    const uint8_t *weights = nullptr;
    size_t row_bytes = 0;
    int32_t in = 0, out = 0;
    float scale = 1.0f;
    const memra_kernel_v1 *kernel = nullptr;
};

struct ExpertPlan {
    Projection gate, up, down;
    float route_weight = 0.0f;
    // Offsets into the call's scratch buffer.
    size_t gate_out = 0, up_out = 0, h = 0, hq = 0, down_out = 0;
};

struct Tile {
    int32_t expert;
    int32_t row_begin, row_end;
};

// One expert's way through a call: its gate/up tiles not yet done, and whether its down input
// (the quantized h) is ready.
struct ExpertProgress {
    std::atomic<int32_t> gate_up_left{0};
    std::atomic<bool> down_input_ready{false};
};

// Everything a call needs beyond the caller's buffers, reused by the next call on this thread.
struct Workspace {
    std::vector<ExpertPlan> experts;
    std::vector<Tile> gate_up_tiles, down_tiles;
    std::unique_ptr<ExpertProgress[]> progress;
    int32_t progress_capacity = 0;
    AlignedBuffer scratch;
    AlignedBuffer file_weights;
};

Workspace &thread_workspace() {
    thread_local Workspace ws;
    return ws;
}

// The tile size for a phase whose matrices hold `phase_bytes` together, cut for `members` threads.
size_t tile_bytes_for(size_t phase_bytes, int32_t members) {
    const size_t share = phase_bytes / (static_cast<size_t>(std::max(members, 1)) * kTilesPerMember);
    return std::clamp(share, kMinTileBytes, kMaxTileBytes);
}

int32_t tile_rows_for(size_t row_bytes, int32_t out, size_t tile_bytes) {
    size_t rows = std::max<size_t>(1, tile_bytes / std::max<size_t>(row_bytes, 1));
    rows = (rows + kTileRowMultiple - 1) / kTileRowMultiple * kTileRowMultiple;
    return static_cast<int32_t>(std::min<size_t>(rows, static_cast<size_t>(out)));
}

// `expert` < 0 for the rows call's single expert. Messages are built only on failure, so the
// steady state allocates nothing here.
Projection plan_projection(const BackendRegistry &registry, const CpuProjectionV2 &p,
                           int32_t expert, const char *projection) {
    auto where = [&] {
        return (expert < 0 ? std::string("expert") : "expert " + std::to_string(expert)) + " " +
               projection;
    };
    Projection out;
    const KernelChoice choice = registry.kernel_for(p.qtype);
    if (!choice.kernel)
        fail(MEMRA_STATUS_NO_BACKEND, where() + ": no loaded backend serves qtype " +
                                          memra_qtype_find(p.qtype)->name);
    if (!registry.quantizer_for(choice.kernel->act_format))
        fail(MEMRA_STATUS_NO_BACKEND, where() + ": no loaded backend quantizes activations to " +
                                          memra_act_format_name(choice.kernel->act_format));
    out.weights = p.weights;
    out.row_bytes = p.row_bytes;
    out.in = p.in_features;
    out.out = p.out_features;
    out.scale = p.scale;
    out.kernel = choice.kernel;
    return out;
}

// File-backed projections come from the weight cache, or are streamed through this thread's
// buffer (weight_source.h); `weights` holds the cache pins until the call returns.
// `single` is the rows call's one expert, named without an index in messages.
void read_file_weights(const CpuExpertV2 *experts, int32_t count, bool single,
                       std::vector<ExpertPlan> &plans, CallWeights &weights) {
    static const char *const kNames[3] = {"gate", "up", "down"};
    for (int32_t i = 0; i < count; ++i) {
        const CpuProjectionV2 *src[3] = {&experts[i].gate, &experts[i].up, &experts[i].down};
        Projection *dst[3] = {&plans[i].gate, &plans[i].up, &plans[i].down};
        for (int j = 0; j < 3; ++j)
            if (src[j]->file_fd >= 0) weights.need(*src[j], single ? -1 : i, kNames[j], &dst[j]->weights);
    }
    weights.resolve();
}

void append_tiles(std::vector<Tile> &tiles, int32_t expert, const Projection &p, size_t tile_bytes) {
    const int32_t tile_rows = tile_rows_for(p.row_bytes, p.out, tile_bytes);
    for (int32_t r = 0; r < p.out; r += tile_rows) tiles.push_back({expert, r, std::min(p.out, r + tile_rows)});
}

// silu(s_g * g) * (s_u * u), silu(t) = t / (1 + e^-t), elementwise over a run of rows.
void swiglu(const float *g, const float *u, float gate_scale, float up_scale, float *h, int32_t n) {
    for (int32_t i = 0; i < n; ++i) {
        const float t = gate_scale * g[i];
        h[i] = (t / (1.0f + std::exp(-t))) * (up_scale * u[i]);
    }
}

size_t matrix_bytes(const Projection &p) { return p.row_bytes * static_cast<size_t>(p.out); }

// The tiles of every planned expert for a team of at most `members`: its gate/up rows (gate and
// up share a shape; a tile's size counts the gate's bytes), then its down rows.
void cut_tiles(Workspace &ws, int32_t members) {
    size_t gate_bytes = 0, down_bytes = 0;
    for (const ExpertPlan &e : ws.experts) {
        gate_bytes += matrix_bytes(e.gate);
        down_bytes += matrix_bytes(e.down);
    }
    const size_t gate_tile = tile_bytes_for(gate_bytes, members), down_tile = tile_bytes_for(down_bytes, members);
    ws.gate_up_tiles.clear();
    ws.down_tiles.clear();
    for (size_t i = 0; i < ws.experts.size(); ++i) {
        append_tiles(ws.gate_up_tiles, static_cast<int32_t>(i), ws.experts[i].gate, gate_tile);
        append_tiles(ws.down_tiles, static_cast<int32_t>(i), ws.experts[i].down, down_tile);
    }
}

// Progress counters for the planned experts and their gate/up tiles.
ExpertProgress *reset_progress(Workspace &ws) {
    const int32_t experts = static_cast<int32_t>(ws.experts.size());
    const std::vector<Tile> &gate_up = ws.gate_up_tiles;
    if (ws.progress_capacity < experts) {
        ws.progress.reset(new ExpertProgress[static_cast<size_t>(experts)]);
        ws.progress_capacity = experts;
    }
    for (int32_t i = 0; i < experts; ++i) {
        ws.progress[i].gate_up_left.store(0, std::memory_order_relaxed);
        ws.progress[i].down_input_ready.store(false, std::memory_order_relaxed);
    }
    for (const Tile &t : gate_up) ws.progress[t.expert].gate_up_left.fetch_add(1, std::memory_order_relaxed);
    return ws.progress.get();
}

// The CPUs the calling thread may run on (its affinity mask, which cgroup cpusets and taskset
// narrow): a team larger than that only time-slices its members on the same cores, and a
// member that loses its core holds up the down tiles waiting for its h. The engine passes
// threads=8 by default, also on smaller machines.
int32_t allowed_cpus() {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return std::numeric_limits<int32_t>::max();
    return std::max(1, CPU_COUNT(&set));
}

// Results never depend on the team size (threads split rows, never a row's reduction).
int32_t team_cap(int32_t threads) { return std::max(1, std::min(threads, allowed_cpus())); }

void wait_until_set(const std::atomic<bool> &flag) {
    for (int spins = 0; !flag.load(std::memory_order_acquire); ++spins)
        if (spins >= 64) std::this_thread::yield();
}

// The gate/up tiles, then the down tiles, in ONE dynamic loop (team.h). Three loops with a
// barrier each (OpenMP's, when this was written) made the team wait at every barrier for a member
// that had lost its core to another process, while the waiters' active wait kept their cores
// busy: 2-thread token calls ran ~2x slower whenever the machine was shared. Here whoever finishes an expert's last gate/up tile
// quantizes its h, and a down tile waits (yielding its core) only for its own expert's h. Tiles
// are handed out in index order, so whatever a down tile waits for is already taken by a thread
// that is not waiting. Every value is still computed by the same operations whatever the team
// size.
template <class GateUp, class QuantizeH, class Down>
void run_tiles(Workspace &ws, int32_t members, const GateUp &gate_up, const QuantizeH &quantize_h,
               const Down &down) {
    const Tile *gu = ws.gate_up_tiles.data();
    const Tile *d = ws.down_tiles.data();
    const long n_gu = static_cast<long>(ws.gate_up_tiles.size());
    const long n_d = static_cast<long>(ws.down_tiles.size());
    const int32_t team = static_cast<int32_t>(std::min<long>(members, std::max<long>(1, std::max(n_gu, n_d))));
    ExpertProgress *progress = reset_progress(ws);
    auto one_tile = [&](long t) {
        if (t < n_gu) {
            const Tile &tile = gu[t];
            gate_up(tile);
            ExpertProgress &p = progress[tile.expert];
            if (p.gate_up_left.fetch_sub(1, std::memory_order_acq_rel) == 1) {
                quantize_h(tile.expert);
                p.down_input_ready.store(true, std::memory_order_release);
            }
        } else {
            const Tile &tile = d[t - n_gu];
            wait_until_set(progress[tile.expert].down_input_ready);
            down(tile);
        }
    };
    run_team(team, n_gu + n_d, one_tile);
}

// Activation rows for each format the gate/up kernels consume: quantized once per call and
// shared by every expert (all experts see the same x).
struct ActivationSet {
    size_t offset[MEMRA_ACT_FORMAT_COUNT];
    bool needed[MEMRA_ACT_FORMAT_COUNT] = {};
};

}  // namespace

void moe_token(const BackendRegistry &registry, const CpuExpertV2 *experts, int32_t count,
               const float *input, float *output, int32_t threads) {
    StopWatch watch;
    Workspace &ws = thread_workspace();
    const int32_t n_in = experts[0].gate.in_features;
    const int32_t n_out = experts[0].down.out_features;

    ws.experts.assign(static_cast<size_t>(count), ExpertPlan{});
    ScratchLayout layout;
    ActivationSet x;
    for (int32_t i = 0; i < count; ++i) {
        ExpertPlan &e = ws.experts[static_cast<size_t>(i)];
        e.gate = plan_projection(registry, experts[i].gate, i, "gate");
        e.up = plan_projection(registry, experts[i].up, i, "up");
        e.down = plan_projection(registry, experts[i].down, i, "down");
        e.route_weight = experts[i].route_weight;
        for (const Projection *p : {&e.gate, &e.up}) x.needed[p->kernel->act_format] = true;
        const size_t n_ff = static_cast<size_t>(e.gate.out);
        e.gate_out = layout.add(n_ff * sizeof(float));
        e.up_out = layout.add(n_ff * sizeof(float));
        e.h = layout.add(n_ff * sizeof(float));
        e.hq = layout.add(memra_act_row_bytes(e.down.kernel->act_format, e.gate.out));
        e.down_out = layout.add(static_cast<size_t>(n_out) * sizeof(float));
    }
    for (int f = 0; f < MEMRA_ACT_FORMAT_COUNT; ++f)
        if (x.needed[f]) x.offset[f] = layout.add(memra_act_row_bytes(f, n_in));

    uint8_t *base = ws.scratch.reserve(layout.total());
    watch.lap_into(stats().prepare_ns);
    CallWeights file_weights(ws.file_weights);
    read_file_weights(experts, count, false, ws.experts, file_weights);
    watch.restart();  // reading is io_ns and insert_ns, not prepare_ns
    for (int f = 0; f < MEMRA_ACT_FORMAT_COUNT; ++f)
        if (x.needed[f]) registry.quantizer_for(f)(input, n_in, base + x.offset[f]);

    const int32_t members = team_cap(threads);
    cut_tiles(ws, members);
    watch.lap_into(stats().prepare_ns);

    const ExpertPlan *plans = ws.experts.data();
    auto f32 = [base](size_t offset) { return reinterpret_cast<float *>(base + offset); };
    run_tiles(
        ws, members,
        [&](const Tile &tile) {  // gate and up fused: one tile reads the same quantized x for both
            const ExpertPlan &e = plans[tile.expert];
            const int32_t rows = tile.row_end - tile.row_begin;
            float *g = f32(e.gate_out) + tile.row_begin;
            float *u = f32(e.up_out) + tile.row_begin;
            e.gate.kernel->gemv(e.gate.weights + tile.row_begin * e.gate.row_bytes, e.gate.row_bytes,
                                rows, e.gate.in, base + x.offset[e.gate.kernel->act_format], g);
            e.up.kernel->gemv(e.up.weights + tile.row_begin * e.up.row_bytes, e.up.row_bytes, rows,
                              e.up.in, base + x.offset[e.up.kernel->act_format], u);
            swiglu(g, u, e.gate.scale, e.up.scale, f32(e.h) + tile.row_begin, rows);
        },
        [&](int32_t i) {
            const ExpertPlan &e = plans[i];
            registry.quantizer_for(e.down.kernel->act_format)(f32(e.h), e.down.in, base + e.hq);
        },
        [&](const Tile &tile) {
            const ExpertPlan &e = plans[tile.expert];
            e.down.kernel->gemv(e.down.weights + tile.row_begin * e.down.row_bytes, e.down.row_bytes,
                                tile.row_end - tile.row_begin, e.down.in, base + e.hq,
                                f32(e.down_out) + tile.row_begin);
        });

    // The route-weighted sum in expert order, the same for every team size.
    for (int32_t j = 0; j < n_out; ++j) {
        float acc = 0.0f;
        for (int32_t i = 0; i < count; ++i) {
            const ExpertPlan &e = plans[i];
            acc += e.route_weight * (e.down.scale * f32(e.down_out)[j]);
        }
        output[j] = acc;
    }
    watch.lap_into(stats().compute_ns);
}

void expert_rows(const BackendRegistry &registry, const CpuExpertV2 &expert, const float *inputs,
                 int32_t rows, const float *route_weights, float *outputs, int32_t threads) {
    StopWatch watch;
    Workspace &ws = thread_workspace();
    ws.experts.assign(1, ExpertPlan{});
    ExpertPlan &e = ws.experts[0];
    e.gate = plan_projection(registry, expert.gate, -1, "gate");
    e.up = plan_projection(registry, expert.up, -1, "up");
    e.down = plan_projection(registry, expert.down, -1, "down");
    const int32_t n_in = e.gate.in, n_ff = e.gate.out, n_out = e.down.out;
    const size_t m = static_cast<size_t>(rows);

    ScratchLayout layout;
    ActivationSet x;
    size_t x_stride[MEMRA_ACT_FORMAT_COUNT] = {};
    for (const Projection *p : {&e.gate, &e.up}) x.needed[p->kernel->act_format] = true;
    for (int f = 0; f < MEMRA_ACT_FORMAT_COUNT; ++f) {
        if (!x.needed[f]) continue;
        x_stride[f] = memra_act_row_bytes(f, n_in);
        x.offset[f] = layout.add(m * x_stride[f]);
    }
    const size_t ff = static_cast<size_t>(n_ff);
    e.gate_out = layout.add(m * ff * sizeof(float));
    e.up_out = layout.add(m * ff * sizeof(float));
    e.h = layout.add(m * ff * sizeof(float));
    const size_t hq_stride = memra_act_row_bytes(e.down.kernel->act_format, n_ff);
    e.hq = layout.add(m * hq_stride);
    e.down_out = layout.add(m * static_cast<size_t>(n_out) * sizeof(float));

    uint8_t *base = ws.scratch.reserve(layout.total());
    watch.lap_into(stats().prepare_ns);
    CallWeights file_weights(ws.file_weights);
    read_file_weights(&expert, 1, true, ws.experts, file_weights);
    watch.restart();  // reading is io_ns and insert_ns, not prepare_ns
    for (int f = 0; f < MEMRA_ACT_FORMAT_COUNT; ++f)
        if (x.needed[f])
            for (size_t r = 0; r < m; ++r)
                registry.quantizer_for(f)(inputs + r * static_cast<size_t>(n_in), n_in,
                                          base + x.offset[f] + r * x_stride[f]);

    const int32_t members = team_cap(threads);
    cut_tiles(ws, members);
    watch.lap_into(stats().prepare_ns);

    auto f32 = [base](size_t offset) { return reinterpret_cast<float *>(base + offset); };
    float *G = f32(e.gate_out), *U = f32(e.up_out), *H = f32(e.h), *D = f32(e.down_out);
    run_tiles(
        ws, members,
        // Each tile of rows is applied to all m activation rows at once (gemm), so a kernel
        // decodes each weight block once for every row instead of once per row.
        [&](const Tile &tile) {
            const int32_t nrows = tile.row_end - tile.row_begin;
            e.gate.kernel->gemm(e.gate.weights + tile.row_begin * e.gate.row_bytes, e.gate.row_bytes,
                                nrows, n_in, base + x.offset[e.gate.kernel->act_format],
                                x_stride[e.gate.kernel->act_format], rows, G + tile.row_begin, ff);
            e.up.kernel->gemm(e.up.weights + tile.row_begin * e.up.row_bytes, e.up.row_bytes, nrows,
                              n_in, base + x.offset[e.up.kernel->act_format],
                              x_stride[e.up.kernel->act_format], rows, U + tile.row_begin, ff);
            for (size_t r = 0; r < m; ++r)
                swiglu(G + r * ff + tile.row_begin, U + r * ff + tile.row_begin, e.gate.scale,
                       e.up.scale, H + r * ff + tile.row_begin, nrows);
        },
        [&](int32_t) {
            for (size_t r = 0; r < m; ++r)
                registry.quantizer_for(e.down.kernel->act_format)(H + r * ff, n_ff, base + e.hq + r * hq_stride);
        },
        [&](const Tile &tile) {
            e.down.kernel->gemm(e.down.weights + tile.row_begin * e.down.row_bytes, e.down.row_bytes,
                                tile.row_end - tile.row_begin, n_ff, base + e.hq, hq_stride, rows,
                                D + tile.row_begin, static_cast<size_t>(n_out));
        });

    // Same expression as the token path's sum for one expert (0 + w * (s_d * y) == w * (s_d * y)),
    // so one expert's rows call and its token call agree bit for bit.
    for (size_t r = 0; r < m; ++r)
        for (int32_t j = 0; j < n_out; ++j)
            outputs[r * static_cast<size_t>(n_out) + static_cast<size_t>(j)] =
                route_weights[r] * (e.down.scale * D[r * static_cast<size_t>(n_out) + static_cast<size_t>(j)]);
    watch.lap_into(stats().compute_ns);
}

}  // namespace memra
