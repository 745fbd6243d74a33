// memra-bench-ggml-peer.so: ggml-cpu behind the small C interface of ggml_peer_abi.h, so that
// memra-bench measures it on the same weight bytes as libmemra-cpu-experts without linking ggml.
// Everything here is ggml's public API, used the way llama.cpp uses it: the CPU backend loaded
// through ggml's backend registry (the best libggml-cpu-<variant>.so for this CPU), weights in a
// CPU buffer over the caller's bytes (and, for the formats the CPU backend's extra buffer type
// repacks, in that buffer type: what llama.cpp does by default), the MoE graph of
// llm_graph_context::build_moe_ffn, one persistent thread pool per thread count.
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml.h"
#include "ggml_peer_abi.h"

#define PEER_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

void put(char *buf, size_t len, const std::string &text) {
    if (buf && len) std::snprintf(buf, len, "%s", text.c_str());
}

// ggml's INFO lines (every backend it loads, buffer sizes) would drown the bench's own output;
// warnings and errors go to stderr.
void log_warnings(enum ggml_log_level level, const char *text, void *) {
    static enum ggml_log_level last = GGML_LOG_LEVEL_INFO;
    if (level != GGML_LOG_LEVEL_CONT) last = level;
    if (last >= GGML_LOG_LEVEL_WARN && last != GGML_LOG_LEVEL_CONT) std::fprintf(stderr, "ggml: %s", text);
}

std::string base_name(const std::string &path) { return path.substr(path.find_last_of('/') + 1); }

std::string dir_name(const std::string &path) {
    const size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? "." : path.substr(0, slash);
}

// The shared object that holds `symbol`.
std::string library_of(const void *symbol) {
    Dl_info info{};
    if (!dladdr(symbol, &info) || !info.dli_fname) return "";
    return info.dli_fname;
}

struct ContextFree {
    void operator()(ggml_context *c) const { ggml_free(c); }
};
using Context = std::unique_ptr<ggml_context, ContextFree>;

Context new_context(size_t tensors, bool graph) {
    ggml_init_params p{};
    p.mem_size = ggml_tensor_overhead() * tensors + (graph ? ggml_graph_overhead() : 0);
    p.no_alloc = true;
    Context c(ggml_init(p));
    if (!c) throw std::runtime_error("ggml_init failed");
    return c;
}

// The three weight tensors of one placement.
struct Placement {
    ggml_tensor *gate = nullptr, *up = nullptr, *down = nullptr;
};

// silu(a) * b elementwise with expf, the library contract's silu (MEMRA_GGML_PEER_EXACT_SILU).
void exact_swiglu(ggml_tensor *dst, const ggml_tensor *a, const ggml_tensor *b, int ith, int nth, void *) {
    const int64_t rows = ggml_nrows(dst), n = dst->ne[0];
    for (int64_t r = ith; r < rows; r += nth) {
        const float *g = reinterpret_cast<const float *>(static_cast<const char *>(a->data) + r * a->nb[1]);
        const float *u = reinterpret_cast<const float *>(static_cast<const char *>(b->data) + r * b->nb[1]);
        float *h = reinterpret_cast<float *>(static_cast<char *>(dst->data) + r * dst->nb[1]);
        for (int64_t i = 0; i < n; ++i) h[i] = (g[i] / (1.0f + std::exp(-g[i]))) * u[i];
    }
}

// One built graph: llama.cpp's MoE FFN for n_tokens tokens, each routed to n_used experts.
struct Step {
    int layout = 0, n_used = 0, n_tokens = 0;
    Context ctx;
    ggml_backend_buffer_t inputs = nullptr;
    ggml_gallocr_t galloc = nullptr;
    ggml_cgraph *graph = nullptr;
    ggml_tensor *x = nullptr, *ids = nullptr, *weights = nullptr, *out = nullptr;
    ~Step() {
        if (galloc) ggml_gallocr_free(galloc);
        if (inputs) ggml_backend_buffer_free(inputs);
    }
};

}  // namespace

struct memra_ggml_peer {
    ggml_backend_reg_t reg = nullptr;
    ggml_backend_dev_t dev = nullptr;
    ggml_backend_t backend = nullptr;
    std::string variant_path;  // the libggml-cpu-<variant>.so ggml's loader chose
    // The CPU backend's own functions (in the variant library), found through the registry.
    ggml_backend_set_n_threads_t set_n_threads = nullptr;
    ggml_backend_dev_get_extra_bufts_t get_extra_bufts = nullptr;
    ggml_threadpool_t (*threadpool_new)(ggml_threadpool_params *) = nullptr;
    void (*threadpool_free)(ggml_threadpool_t) = nullptr;
    void (*set_threadpool)(ggml_backend_t, ggml_threadpool_t) = nullptr;
    void (*threadpool_pause)(ggml_threadpool_t) = nullptr;
    const ggml_type_traits_cpu *(*type_traits_cpu)(ggml_type) = nullptr;  // the variant's, for from_float
    void *variant_handle = nullptr;  // a reference to the loaded variant, for pause
    std::map<int32_t, ggml_threadpool_t> pools;
    ggml_threadpool_t active = nullptr;

    memra_ggml_peer_weights w{};
    Context plain_ctx, repack_ctx;
    ggml_backend_buffer_t plain_buf = nullptr, repack_buf = nullptr;
    Placement placements[2];
    bool repacked_any = false;
    float scales[3] = {1.0f, 1.0f, 1.0f};  // gate, up, down (memra_ggml_peer_set_scales)
    std::vector<std::unique_ptr<Step>> steps;

    ~memra_ggml_peer() {
        drop_weights();
        for (auto &p : pools) threadpool_free(p.second);
        if (backend) ggml_backend_free(backend);
        if (variant_handle) dlclose(variant_handle);
    }

    void drop_weights() {
        steps.clear();
        if (plain_buf) ggml_backend_buffer_free(plain_buf);
        if (repack_buf) ggml_backend_buffer_free(repack_buf);
        plain_buf = repack_buf = nullptr;
        plain_ctx.reset();
        repack_ctx.reset();
        placements[0] = placements[1] = Placement{};
        repacked_any = false;
        scales[0] = scales[1] = scales[2] = 1.0f;
    }

    void use_threads(int32_t n) {
        auto found = pools.find(n);
        if (found == pools.end()) {
            ggml_threadpool_params p = ggml_threadpool_params_default(n);
            p.paused = true;  // started by the first step that uses it
            ggml_threadpool_t pool = threadpool_new(&p);
            if (!pool) throw std::runtime_error("ggml_threadpool_new(" + std::to_string(n) + ") failed");
            found = pools.emplace(n, pool).first;
        }
        if (active != found->second) {
            if (active) threadpool_pause(active);
            set_threadpool(backend, found->second);
            active = found->second;
        }
        set_n_threads(backend, n);
    }

    ggml_backend_buffer_type_t extra_buft_for(ggml_tensor *like, int32_t n_used) const;
    Step &step(int layout, int n_used, int n_tokens);
    void compute(Step &s, int32_t threads);
};

namespace {

// A tensor of weights' format and [in, out, n_expert] shape, not allocated.
ggml_tensor *weight_tensor(ggml_context *ctx, const memra_ggml_peer_weights &w, int64_t in, int64_t out,
                           const char *name) {
    ggml_tensor *t = ggml_new_tensor_3d(ctx, ggml_type(w.qtype), in, out, w.n_expert);
    ggml_set_name(t, name);
    return t;
}

// llama.cpp's weight_buft_supported for a MUL_MAT_ID weight: a dummy op with the weight in a
// zero-size buffer of `buft`, asked of the device (a repack buffer aborts on set_tensor for a type
// it cannot repack, so this is asked first).
bool buft_supports(ggml_backend_dev_t dev, ggml_backend_buffer_type_t buft, const ggml_tensor *like, int32_t n_used) {
    Context ctx = new_context(8, false);
    ggml_tensor *w = ggml_new_tensor_3d(ctx.get(), like->type, like->ne[0], like->ne[1], like->ne[2]);
    ggml_tensor *b = ggml_new_tensor_3d(ctx.get(), GGML_TYPE_F32, w->ne[0], n_used, 512);
    ggml_tensor *ids = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_I32, n_used, 512);
    ggml_tensor *op = ggml_mul_mat_id(ctx.get(), w, b, ids);
    w->buffer = ggml_backend_buft_alloc_buffer(buft, 0);
    const bool ok = ggml_backend_dev_supports_op(dev, op);
    ggml_backend_buffer_free(w->buffer);
    w->buffer = nullptr;
    return ok;
}

}  // namespace

ggml_backend_buffer_type_t memra_ggml_peer::extra_buft_for(ggml_tensor *like, int32_t n_used) const {
    if (!get_extra_bufts) return nullptr;
    for (ggml_backend_buffer_type_t *b = get_extra_bufts(dev); b && *b; ++b)
        if (buft_supports(dev, *b, like, n_used)) return *b;
    return nullptr;
}

Step &memra_ggml_peer::step(int layout, int n_used, int n_tokens) {
    for (auto &s : steps)
        if (s->layout == layout && s->n_used == n_used && s->n_tokens == n_tokens) return *s;
    auto s = std::make_unique<Step>();
    s->layout = layout;
    s->n_used = n_used;
    s->n_tokens = n_tokens;
    s->ctx = new_context(size_t(16 + 2 * n_used), true);
    ggml_context *ctx = s->ctx.get();
    const int64_t n_embd = w.n_embd;
    // The inputs first, in their own buffer: the router's results (ids, weights) and the token(s).
    s->x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, n_embd, 1, n_tokens);
    s->ids = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, n_used, n_tokens);
    s->weights = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 1, n_used, n_tokens);
    for (ggml_tensor *t : {s->x, s->ids, s->weights}) ggml_set_input(t);
    s->inputs = ggml_backend_alloc_ctx_tensors(ctx, backend);
    if (!s->inputs) throw std::runtime_error("cannot allocate the graph's inputs");

    // llm_graph_context::build_moe_ffn: LLM_FFN_SILU with separate gate and up, weights after
    // the FFN, experts summed by views and adds.
    const Placement &p = placements[layout & MEMRA_GGML_PEER_REPACKED];
    // A tensor's macro scale, where set (memra_ggml_peer_set_scales), right after its product.
    auto scaled = [&](ggml_tensor *t, float scale) { return scale == 1.0f ? t : ggml_scale(ctx, t, scale); };
    ggml_tensor *up = scaled(ggml_mul_mat_id(ctx, p.up, s->x, s->ids), scales[1]);      // [n_ff, n_used, n_tokens]
    ggml_tensor *gate = scaled(ggml_mul_mat_id(ctx, p.gate, s->x, s->ids), scales[0]);  // [n_ff, n_used, n_tokens]
    ggml_tensor *h = layout & MEMRA_GGML_PEER_EXACT_SILU
                         ? ggml_map_custom2(ctx, gate, up, exact_swiglu, GGML_N_TASKS_MAX, nullptr)
                         : ggml_swiglu_split(ctx, gate, up);
    ggml_tensor *experts = scaled(ggml_mul_mat_id(ctx, p.down, h, s->ids), scales[2]);  // [n_embd, n_used, n_tokens]
    experts = ggml_mul(ctx, experts, s->weights);
    s->graph = ggml_new_graph(ctx);
    ggml_build_forward_expand(s->graph, experts);
    std::vector<ggml_tensor *> views;
    for (int i = 0; i < n_used; ++i) {
        views.push_back(ggml_view_2d(ctx, experts, n_embd, n_tokens, experts->nb[2], size_t(i) * experts->nb[1]));
        ggml_build_forward_expand(s->graph, views.back());
    }
    ggml_tensor *out = views[0];
    for (int i = 1; i < n_used; ++i) {
        out = ggml_add(ctx, out, views[size_t(i)]);
        ggml_build_forward_expand(s->graph, out);
    }
    if (n_used == 1) out = ggml_cont(ctx, out);
    ggml_set_output(out);
    ggml_build_forward_expand(s->graph, out);
    s->out = out;

    s->galloc = ggml_gallocr_new(ggml_backend_get_default_buffer_type(backend));
    if (!s->galloc || !ggml_gallocr_alloc_graph(s->galloc, s->graph))
        throw std::runtime_error("cannot allocate the graph's intermediate tensors");
    steps.push_back(std::move(s));
    return *steps.back();
}

void memra_ggml_peer::compute(Step &s, int32_t threads) {
    use_threads(threads);
    const ggml_status status = ggml_backend_graph_compute(backend, s.graph);
    if (status != GGML_STATUS_SUCCESS)
        throw std::runtime_error(std::string("ggml_backend_graph_compute: ") + ggml_status_to_string(status));
}

namespace {

template <class Fn>
int guarded(char *error, size_t error_len, Fn &&fn) {
    try {
        fn();
        return 0;
    } catch (const std::exception &e) {
        put(error, error_len, e.what());
        return -1;
    }
}

template <class F>
F required_proc(ggml_backend_reg_t reg, const char *name) {
    void *p = ggml_backend_reg_get_proc_address(reg, name);
    if (!p) throw std::runtime_error(std::string("the CPU backend does not provide ") + name);
    return reinterpret_cast<F>(p);
}

void check_layout(const memra_ggml_peer &peer, int32_t layout) {
    if (!peer.plain_buf) throw std::runtime_error("no weights prepared");
    if (layout & ~(MEMRA_GGML_PEER_REPACKED | MEMRA_GGML_PEER_EXACT_SILU))
        throw std::runtime_error("unknown layout " + std::to_string(layout));
    if ((layout & MEMRA_GGML_PEER_REPACKED) && !peer.repacked_any)
        throw std::runtime_error("no projection of this format is repacked on this CPU");
}

}  // namespace

PEER_EXPORT int32_t memra_ggml_peer_abi_version(void) { return MEMRA_GGML_PEER_ABI_VERSION; }

PEER_EXPORT memra_ggml_peer *memra_ggml_peer_open(char *error, size_t error_len) {
    std::unique_ptr<memra_ggml_peer> peer(new memra_ggml_peer);
    const int rc = guarded(error, error_len, [&] {
        ggml_log_set(log_warnings, nullptr);
        // The variants sit beside the libggml this module links (its RPATH).
        const std::string ggml_dir = dir_name(library_of(reinterpret_cast<void *>(&ggml_backend_load_all_from_path)));
        if (!ggml_backend_reg_by_name("CPU")) ggml_backend_load_all_from_path(ggml_dir.c_str());
        peer->reg = ggml_backend_reg_by_name("CPU");
        if (!peer->reg) throw std::runtime_error("ggml loaded no CPU backend from " + ggml_dir);
        if (ggml_backend_reg_dev_count(peer->reg) < 1) throw std::runtime_error("ggml's CPU backend has no device");
        peer->dev = ggml_backend_reg_dev_get(peer->reg, 0);
        peer->set_n_threads = required_proc<ggml_backend_set_n_threads_t>(peer->reg, "ggml_backend_set_n_threads");
        peer->threadpool_new = required_proc<decltype(peer->threadpool_new)>(peer->reg, "ggml_threadpool_new");
        peer->threadpool_free = required_proc<decltype(peer->threadpool_free)>(peer->reg, "ggml_threadpool_free");
        peer->set_threadpool = required_proc<decltype(peer->set_threadpool)>(peer->reg, "ggml_backend_cpu_set_threadpool");
        peer->get_extra_bufts = reinterpret_cast<ggml_backend_dev_get_extra_bufts_t>(
            ggml_backend_reg_get_proc_address(peer->reg, "ggml_backend_dev_get_extra_bufts"));
        // ggml_threadpool_pause is exported by the variant library but not offered by the registry.
        peer->variant_path = library_of(reinterpret_cast<void *>(peer->threadpool_new));
        peer->variant_handle = dlopen(peer->variant_path.c_str(), RTLD_NOW | RTLD_NOLOAD);
        if (!peer->variant_handle) throw std::runtime_error("cannot reopen the CPU variant " + peer->variant_path);
        peer->threadpool_pause =
            reinterpret_cast<decltype(peer->threadpool_pause)>(dlsym(peer->variant_handle, "ggml_threadpool_pause"));
        if (!peer->threadpool_pause) throw std::runtime_error(peer->variant_path + " has no ggml_threadpool_pause");
        peer->type_traits_cpu = reinterpret_cast<decltype(peer->type_traits_cpu)>(
            dlsym(peer->variant_handle, "ggml_get_type_traits_cpu"));  // optional: from_float and vec_dot say when absent
        peer->backend = ggml_backend_dev_init(peer->dev, nullptr);
        if (!peer->backend) throw std::runtime_error("cannot initialise ggml's CPU backend");
    });
    return rc == 0 ? peer.release() : nullptr;
}

PEER_EXPORT void memra_ggml_peer_close(memra_ggml_peer *peer) { delete peer; }

PEER_EXPORT size_t memra_ggml_peer_describe(const memra_ggml_peer *peer, char *line, size_t len) {
    std::string variant = base_name(peer->variant_path);
    const std::string prefix = "libggml-cpu-", suffix = ".so";
    if (variant.compare(0, prefix.size(), prefix) == 0 && variant.size() > prefix.size() + suffix.size())
        variant = variant.substr(prefix.size(), variant.size() - prefix.size() - suffix.size());
    std::string text = std::string("ggml ") + ggml_version() + " (" + ggml_commit() + "), CPU variant " + variant +
                       " (" + base_name(peer->variant_path) + ", ggml's choice for this CPU)";
    std::string extra;
    if (peer->get_extra_bufts)
        for (ggml_backend_buffer_type_t *b = peer->get_extra_bufts(peer->dev); b && *b; ++b)
            extra += std::string(extra.empty() ? "" : ",") + ggml_backend_buft_name(*b);
    text += ", extra buffer types: " + (extra.empty() ? std::string("none") : extra);
    put(line, len, text);
    return text.size();
}

PEER_EXPORT int memra_ggml_peer_prepare(memra_ggml_peer *peer, const memra_ggml_peer_weights *weights, char *repacked,
                                        size_t repacked_len, char *error, size_t error_len) {
    return guarded(error, error_len, [&] {
        peer->drop_weights();
        put(repacked, repacked_len, "");
        const memra_ggml_peer_weights &w = *weights;
        if (w.qtype < 0 || w.qtype >= GGML_TYPE_COUNT || w.n_embd < 1 || w.n_ff < 1 || w.n_expert < 1)
            throw std::runtime_error("bad weights description");
        peer->w = w;
        // Plain: tensors over the caller's bytes, in one CPU buffer (llama.cpp's mmap'ed weights).
        peer->plain_ctx = new_context(3, false);
        Placement &plain = peer->placements[MEMRA_GGML_PEER_PLAIN];
        plain.gate = weight_tensor(peer->plain_ctx.get(), w, w.n_embd, w.n_ff, "ffn_gate_exps");
        plain.up = weight_tensor(peer->plain_ctx.get(), w, w.n_embd, w.n_ff, "ffn_up_exps");
        plain.down = weight_tensor(peer->plain_ctx.get(), w, w.n_ff, w.n_embd, "ffn_down_exps");
        peer->plain_buf = ggml_backend_cpu_buffer_from_ptr(const_cast<void *>(w.base), w.size);
        if (!peer->plain_buf) throw std::runtime_error("ggml_backend_cpu_buffer_from_ptr failed");
        const void *bytes[3] = {w.gate, w.up, w.down};
        ggml_tensor *tensors[3] = {plain.gate, plain.up, plain.down};
        for (int i = 0; i < 3; ++i) {
            const char *at = static_cast<const char *>(bytes[i]), *base = static_cast<const char *>(w.base);
            if (at < base || at + ggml_nbytes(tensors[i]) > base + w.size)
                throw std::runtime_error(std::string(ggml_get_name(tensors[i])) + " is not inside the buffer");
            if (ggml_backend_tensor_alloc(peer->plain_buf, tensors[i], const_cast<char *>(at)) != GGML_STATUS_SUCCESS)
                throw std::runtime_error(std::string("cannot place ") + ggml_get_name(tensors[i]));
        }
        // Repacked: each projection the first extra buffer type supports goes there, the others
        // stay plain (llama.cpp's choice per weight, select_weight_buft).
        Placement &rep = peer->placements[MEMRA_GGML_PEER_REPACKED];
        rep = plain;
        peer->repack_ctx = new_context(3, false);
        ggml_tensor **slots[3] = {&rep.gate, &rep.up, &rep.down};
        const char *names[3] = {"gate", "up", "down"};
        std::string which, buft_name;
        ggml_backend_buffer_type_t chosen = nullptr;
        for (int i = 0; i < 3; ++i) {
            ggml_backend_buffer_type_t buft = peer->extra_buft_for(tensors[i], 8);
            if (!buft || (chosen && buft != chosen)) continue;
            chosen = buft;
            *slots[i] = ggml_dup_tensor(peer->repack_ctx.get(), tensors[i]);
            ggml_set_name(*slots[i], ggml_get_name(tensors[i]));
            which += std::string(which.empty() ? "" : ",") + names[i];
        }
        if (chosen) {
            peer->repack_buf = ggml_backend_alloc_ctx_tensors_from_buft(peer->repack_ctx.get(), chosen);
            if (!peer->repack_buf) throw std::runtime_error(std::string("cannot allocate a ") + ggml_backend_buft_name(chosen) + " buffer");
            if (w.hugepages) {  // still untouched: the repack below faults it in
                const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
                const uintptr_t base = reinterpret_cast<uintptr_t>(ggml_backend_buffer_get_base(peer->repack_buf));
                const uintptr_t from = (base + page - 1) / page * page;
                const uintptr_t to = (base + ggml_backend_buffer_get_size(peer->repack_buf)) / page * page;
                if (to > from) madvise(reinterpret_cast<void *>(from), to - from, MADV_HUGEPAGE);
            }
            for (int i = 0; i < 3; ++i)
                if (*slots[i] != tensors[i]) ggml_backend_tensor_set(*slots[i], bytes[i], 0, ggml_nbytes(tensors[i]));
            peer->repacked_any = true;
            put(repacked, repacked_len, which + ": " + ggml_backend_buft_name(chosen));
        }
    });
}

PEER_EXPORT int memra_ggml_peer_token(memra_ggml_peer *peer, int32_t layout, const int32_t *ids,
                                      const float *route_weights, int32_t count, const float *x, float *out,
                                      int32_t threads, char *error, size_t error_len) {
    return guarded(error, error_len, [&] {
        check_layout(*peer, layout);
        if (count < 1) throw std::runtime_error("count < 1");
        for (int32_t i = 0; i < count; ++i)
            if (ids[i] < 0 || ids[i] >= peer->w.n_expert) throw std::runtime_error("expert id out of range");
        Step &s = peer->step(layout, count, 1);
        std::memcpy(s.x->data, x, sizeof(float) * size_t(peer->w.n_embd));
        std::memcpy(s.ids->data, ids, sizeof(int32_t) * size_t(count));
        std::memcpy(s.weights->data, route_weights, sizeof(float) * size_t(count));
        peer->compute(s, threads);
        std::memcpy(out, s.out->data, sizeof(float) * size_t(peer->w.n_embd));
    });
}

PEER_EXPORT int memra_ggml_peer_rows(memra_ggml_peer *peer, int32_t layout, int32_t expert, const float *inputs,
                                     int32_t rows, const float *route_weights, float *outputs, int32_t threads,
                                     char *error, size_t error_len) {
    return guarded(error, error_len, [&] {
        check_layout(*peer, layout);
        if (rows < 1) throw std::runtime_error("rows < 1");
        if (expert < 0 || expert >= peer->w.n_expert) throw std::runtime_error("expert id out of range");
        Step &s = peer->step(layout, 1, rows);
        const size_t n_embd = size_t(peer->w.n_embd);
        std::memcpy(s.x->data, inputs, sizeof(float) * n_embd * size_t(rows));
        int32_t *ids = static_cast<int32_t *>(s.ids->data);
        for (int32_t r = 0; r < rows; ++r) ids[r] = expert;
        std::memcpy(s.weights->data, route_weights, sizeof(float) * size_t(rows));
        peer->compute(s, threads);
        std::memcpy(outputs, s.out->data, sizeof(float) * n_embd * size_t(rows));
    });
}

PEER_EXPORT int32_t memra_ggml_peer_has_feature(const memra_ggml_peer *peer, const char *name) {
    auto features = reinterpret_cast<ggml_backend_get_features_t>(
        ggml_backend_reg_get_proc_address(peer->reg, "ggml_backend_get_features"));
    for (const ggml_backend_feature *f = features ? features(peer->reg) : nullptr; f && f->name; ++f)
        if (std::strcmp(f->name, name) == 0) return std::strcmp(f->value, "0") != 0;
    return 0;
}

PEER_EXPORT void memra_ggml_peer_pause(memra_ggml_peer *peer) {
    if (peer->active) peer->threadpool_pause(peer->active);
}

PEER_EXPORT int memra_ggml_peer_set_scales(memra_ggml_peer *peer, float gate, float up, float down, char *error,
                                           size_t error_len) {
    return guarded(error, error_len, [&] {
        if (!std::isfinite(gate) || !std::isfinite(up) || !std::isfinite(down))
            throw std::runtime_error("non-finite scale");
        if (gate == peer->scales[0] && up == peer->scales[1] && down == peer->scales[2]) return;
        peer->steps.clear();  // the graphs were built with the old scales
        peer->scales[0] = gate;
        peer->scales[1] = up;
        peer->scales[2] = down;
    });
}

namespace {

void check_type(int32_t qtype, int64_t n) {
    if (qtype < 0 || qtype >= GGML_TYPE_COUNT) throw std::runtime_error("bad ggml type " + std::to_string(qtype));
    const int64_t block = ggml_blck_size(ggml_type(qtype));
    if (n < 0 || block < 1 || n % block != 0)
        throw std::runtime_error(std::to_string(n) + " values are not whole blocks of " + ggml_type_name(ggml_type(qtype)));
}

}  // namespace

PEER_EXPORT int memra_ggml_peer_to_float(const memra_ggml_peer *, int32_t qtype, const void *src, float *dst, int64_t n,
                                         char *error, size_t error_len) {
    return guarded(error, error_len, [&] {
        check_type(qtype, n);
        if (qtype == GGML_TYPE_F32) {
            std::memcpy(dst, src, sizeof(float) * size_t(n));
            return;
        }
        const ggml_type_traits *traits = ggml_get_type_traits(ggml_type(qtype));
        if (!traits || !traits->to_float)
            throw std::runtime_error(std::string("ggml has no to_float for ") + ggml_type_name(ggml_type(qtype)));
        traits->to_float(src, dst, n);
    });
}

PEER_EXPORT int memra_ggml_peer_from_float(const memra_ggml_peer *peer, int32_t qtype, const float *src, void *dst,
                                           int64_t n, char *error, size_t error_len) {
    return guarded(error, error_len, [&] {
        check_type(qtype, n);
        if (!peer->type_traits_cpu) throw std::runtime_error(peer->variant_path + " has no ggml_get_type_traits_cpu");
        const ggml_type_traits_cpu *traits = peer->type_traits_cpu(ggml_type(qtype));
        if (!traits || !traits->from_float)
            throw std::runtime_error(std::string("ggml-cpu has no from_float for ") + ggml_type_name(ggml_type(qtype)));
        traits->from_float(src, dst, n);
    });
}

PEER_EXPORT int memra_ggml_peer_vec_dot(const memra_ggml_peer *peer, int32_t qtype, int64_t n, const void *row,
                                        const void *act, float *result, int32_t *act_type, char *error,
                                        size_t error_len) {
    return guarded(error, error_len, [&] {
        check_type(qtype, n);
        if (!peer->type_traits_cpu) throw std::runtime_error(peer->variant_path + " has no ggml_get_type_traits_cpu");
        const ggml_type_traits_cpu *traits = peer->type_traits_cpu(ggml_type(qtype));
        if (!traits || !traits->vec_dot)
            throw std::runtime_error(std::string("ggml-cpu has no vec_dot for ") + ggml_type_name(ggml_type(qtype)));
        check_type(traits->vec_dot_type, n);
        traits->vec_dot(int(n), result, 0, row, 0, act, 0, 1);
        *act_type = traits->vec_dot_type;
    });
}
