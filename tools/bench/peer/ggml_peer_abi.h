/* The C interface of memra-bench-ggml-peer.so, the module through which `memra-bench --peer ggml`
 * runs ggml-cpu (docs/benchmarks.md, "The ggml peer"). The module links the prebuilt ggml that
 * tools/bench/peer/fetch-ggml-peer fetched; memra-bench itself never links ggml, it dlopens this
 * module and resolves these functions, so the bench builds and runs without ggml.
 *
 * The weights are the caller's bytes, laid out as ggml's mul_mat_id wants them: three tensors
 * (gate, up, down) of n_expert experts each, every expert's rows back to back ([in, out, n_expert]).
 * Each step is the graph llama.cpp builds for an MoE layer (llm_graph_context::build_moe_ffn with
 * SiLU, separate gate and up): mul_mat_id up and gate, swiglu, mul_mat_id down, times the route
 * weights, summed over the experts. Functions returning int return 0 on success, else -1 with a
 * NUL-terminated message in error (truncated to error_len). */
#ifndef MEMRA_BENCH_GGML_PEER_ABI_H
#define MEMRA_BENCH_GGML_PEER_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MEMRA_GGML_PEER_ABI_VERSION 2

/* Where the weights live: the caller's bytes, or ggml's repacked copy of them (the CPU backend's
 * "extra" buffer type, e.g. CPU_REPACK), for the projections whose format it repacks here.
 * MEMRA_GGML_PEER_EXACT_SILU, or'ed in, replaces ggml's swiglu (vectorised, with its own expf
 * approximation) by silu(t) = t / (1 + expf(-t)) times up, the library contract's definition,
 * as a custom op: everything else stays ggml's, so comparing with it isolates the swiglu. */
enum { MEMRA_GGML_PEER_PLAIN = 0, MEMRA_GGML_PEER_REPACKED = 1, MEMRA_GGML_PEER_EXACT_SILU = 2 };

typedef struct memra_ggml_peer memra_ggml_peer;

typedef struct memra_ggml_peer_weights {
    int32_t qtype;     /* ggml type id (memra's qtype ids are ggml's) */
    int32_t n_embd;    /* gate/up in_features, down out_features */
    int32_t n_ff;      /* gate/up out_features, down in_features */
    int32_t n_expert;  /* experts in each tensor */
    const void *gate;  /* n_expert x n_ff rows of n_embd values */
    const void *up;    /* n_expert x n_ff rows of n_embd values */
    const void *down;  /* n_expert x n_embd rows of n_ff values */
    const void *base;  /* one allocation holding all three, 64-byte aligned: ggml's CPU buffer */
    size_t size;
    int32_t hugepages; /* the caller's bytes are on transparent huge pages: advise the repacked copy
                          the same (MADV_HUGEPAGE before it is written), so that both placements
                          differ in layout only, not in page size */
} memra_ggml_peer_weights;

typedef int32_t (*memra_ggml_peer_abi_version_fn)(void);
/* Loads ggml's CPU backend: ggml's own loader scores every libggml-cpu-<variant>.so beside the
 * libggml this module links and loads the best for this CPU. NULL (and the reason) on failure. */
typedef memra_ggml_peer *(*memra_ggml_peer_open_fn)(char *error, size_t error_len);
typedef void (*memra_ggml_peer_close_fn)(memra_ggml_peer *peer);
/* One line: ggml version and commit, the variant library loaded, the device. Returns the length
 * of the whole line (it may have been truncated to len). */
typedef size_t (*memra_ggml_peer_describe_fn)(const memra_ggml_peer *peer, char *line, size_t len);
/* Uses these weights from now on (the bytes are not copied for PLAIN, and must outlive their
 * use); builds the repacked copy of each projection whose format and shape the extra buffer type
 * supports (checked first with a dummy mul_mat_id, as llama.cpp does), and writes which in
 * repacked ("gate,up,down: CPU_REPACK", or "" when none: then REPACKED steps fail). */
typedef int (*memra_ggml_peer_prepare_fn)(memra_ggml_peer *peer, const memra_ggml_peer_weights *weights,
                                          char *repacked, size_t repacked_len, char *error, size_t error_len);
/* layout: PLAIN or REPACKED, optionally | EXACT_SILU.
 * The token step: out[n_embd] = sum_i route_weights[i] * FFN_{ids[i]}(x), i < count. */
typedef int (*memra_ggml_peer_token_fn)(memra_ggml_peer *peer, int32_t layout, const int32_t *ids,
                                        const float *route_weights, int32_t count, const float *x, float *out,
                                        int32_t threads, char *error, size_t error_len);
/* The rows step: outputs[r] = route_weights[r] * FFN_expert(inputs[r]), r < rows (each row is a
 * token routed to this one expert). */
typedef int (*memra_ggml_peer_rows_fn)(memra_ggml_peer *peer, int32_t layout, int32_t expert, const float *inputs,
                                       int32_t rows, const float *route_weights, float *outputs, int32_t threads,
                                       char *error, size_t error_len);
/* 1 when ggml's CPU backend reports this feature (ggml_backend_get_features: "AVX2", "AVX512",
 * ...; for the variant loaded, what it was built for), else 0. */
typedef int32_t (*memra_ggml_peer_has_feature_fn)(const memra_ggml_peer *peer, const char *name);
/* Pauses the thread pool the last step used: its workers stop polling and sleep until the next
 * step (ggml_threadpool_pause). Called between steps, untimed. */
typedef void (*memra_ggml_peer_pause_fn)(memra_ggml_peer *peer);

/* Version 2: what the ggml truth tests (tools/bench/peer/tests) need beyond the bench. */

/* The per-tensor macro scales of the graph's three projections (CpuProjectionV2::scale): each one
 * that is not 1 becomes ggml_scale(mul_mat_id(...), s) right after its mul_mat_id, as llama.cpp
 * applies a tensor's scale; 1 (the default, and what prepare resets them to) adds no node.
 * They apply to every expert alike: ggml's graph has one scale per tensor. */
typedef int (*memra_ggml_peer_set_scales_fn)(memra_ggml_peer *peer, float gate, float up, float down,
                                             char *error, size_t error_len);
/* dst[0..n) = ggml's own decode of n values of type qtype at src: ggml_get_type_traits(qtype)->
 * to_float from libggml-base (for F32, which has none, a copy: what ggml's get_rows does). */
typedef int (*memra_ggml_peer_to_float_fn)(const memra_ggml_peer *peer, int32_t qtype, const void *src, float *dst,
                                           int64_t n, char *error, size_t error_len);
/* dst = src[0..n) in type qtype as ggml's CPU backend quantizes activations before a dot:
 * ggml_get_type_traits_cpu(qtype)->from_float of the CPU variant loaded (e.g. Q8_0, Q8_K, BF16). */
typedef int (*memra_ggml_peer_from_float_fn)(const memra_ggml_peer *peer, int32_t qtype, const float *src, void *dst,
                                             int64_t n, char *error, size_t error_len);
/* *result = ggml-cpu's dot of one row of n values of type qtype with an activation row already in
 * its vec_dot_type (ggml_get_type_traits_cpu(qtype)->vec_dot, nrc 1), which *act_type receives. */
typedef int (*memra_ggml_peer_vec_dot_fn)(const memra_ggml_peer *peer, int32_t qtype, int64_t n, const void *row,
                                          const void *act, float *result, int32_t *act_type, char *error,
                                          size_t error_len);

#ifdef __cplusplus
}
#endif

#endif
