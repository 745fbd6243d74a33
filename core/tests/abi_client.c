/* memra-abi-client: uses the library exactly as the memra engine does. It links nothing of the
 * project: the path comes from MEMRA_CPU_EXPERT_LIB or argv[1], the library is dlopen'ed with
 * RTLD_NOW | RTLD_LOCAL and every entry point is resolved by name (tools/common/abi_loader.h). It
 * runs a token call and a rows call on built-in data, checks the numbers against a
 * double-precision evaluation, and prints the describe line.
 *
 * Everything goes to stdout (the plugin-selection tests read stderr for the library's own log).
 * Exit status: 0 all calls succeeded and were right; 2 the library could not be loaded or lacks a
 * symbol; 3 a result was wrong; 10 + status when a call failed with that status (15: no usable
 * backend). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi_loader.h"

enum { EMBD = 64, FF_A = 32, FF_B = 64, ROWS = 3 };
enum { EXIT_LOAD = 2, EXIT_WRONG = 3, EXIT_STATUS_BASE = 10 };

/* Expert A: F32 weights, nothing rounded on the way: the result must match to float accuracy. */
static float a_gate[FF_A * EMBD], a_up[FF_A * EMBD], a_down[EMBD * FF_A];
/* Expert B: Q8_0 weights (34-byte blocks: fp16 d, 32 int8), rounded activations as ggml does. */
static uint8_t b_gate[FF_B * EMBD / 32 * 34], b_up[FF_B * EMBD / 32 * 34], b_down[EMBD * FF_B / 32 * 34];

/* A small deterministic weight code in [-8, 8]; both formats store code / 32, exactly. */
static int code(int r, int c, int salt) { return (r * 7 + c * 3 + salt * 5) % 17 - 8; }

static void fill_f32(float *w, int rows, int cols, int salt) {
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) w[r * cols + c] = (float)code(r, c, salt) / 32.0f;
}

/* d = 2^-6 (fp16 0x2400, little-endian) times the int8 2 * code. */
static void fill_q8_0(uint8_t *w, int rows, int cols, int salt) {
    for (int r = 0; r < rows; ++r)
        for (int b = 0; b < cols / 32; ++b) {
            uint8_t *blk = w + ((size_t)r * (size_t)(cols / 32) + (size_t)b) * 34;
            blk[0] = 0x00;
            blk[1] = 0x24;
            for (int i = 0; i < 32; ++i) blk[2 + i] = (uint8_t)(int8_t)(2 * code(r, b * 32 + i, salt));
        }
}

static double weight(const CpuProjectionV2 *p, int r, int c) {
    if (p->qtype == MEMRA_QTYPE_F32) return ((const float *)p->weights)[r * p->in_features + c];
    const uint8_t *blk = p->weights + (size_t)r * p->row_bytes + (size_t)(c / 32) * 34;
    return (double)(int8_t)blk[2 + c % 32] / 64.0;
}

static CpuProjectionV2 projection(const void *w, int32_t qtype, int out, int in) {
    CpuProjectionV2 p;
    memset(&p, 0, sizeof p);
    p.weights = (const uint8_t *)w;
    p.qtype = qtype;
    p.in_features = in;
    p.out_features = out;
    p.row_bytes = qtype == MEMRA_QTYPE_F32 ? (size_t)in * 4 : (size_t)in / 32 * 34;
    p.byte_len = p.row_bytes * (size_t)out;
    p.file_fd = -1;
    p.scale = 1.0f;
    return p;
}

/* y += route_weight * down(silu(gate x) * up x), in double. */
static void reference(const CpuExpertV2 *e, const float *x, double route_weight, double *y) {
    double h[FF_B];
    for (int j = 0; j < e->gate.out_features; ++j) {
        double g = 0, u = 0;
        for (int k = 0; k < EMBD; ++k) {
            g += weight(&e->gate, j, k) * x[k];
            u += weight(&e->up, j, k) * x[k];
        }
        h[j] = g / (1.0 + exp(-g)) * u;
    }
    for (int i = 0; i < EMBD; ++i) {
        double acc = 0;
        for (int j = 0; j < e->down.in_features; ++j) acc += weight(&e->down, i, j) * h[j];
        y[i] += route_weight * acc;
    }
}

static double relative_error(const float *got, const double *want, int n) {
    double diff = 0, norm = 0;
    for (int i = 0; i < n; ++i) {
        diff += (got[i] - want[i]) * (got[i] - want[i]);
        norm += want[i] * want[i];
    }
    return sqrt(diff / norm);
}

/* The Q8_0 rounding of x and of h errs by ~0.6% each (tools/expertkit/accuracy.h); 3% leaves a
 * wide margin while still catching a wrong format, scale or row. */
static const double kTolerance = 0.03;

int main(int argc, char **argv) {
    const char *path = getenv("MEMRA_CPU_EXPERT_LIB");
    if (argc > 1) path = argv[1];
    if (!path || !*path) {
        fprintf(stderr, "usage: memra-abi-client LIBRARY (or MEMRA_CPU_EXPERT_LIB=LIBRARY)\n");
        return EXIT_LOAD;
    }
    memra_loaded_abi abi;
    char error[512] = "";
    if (memra_loaded_abi_open(path, &abi, error, sizeof error) != 0) {
        printf("load: %s\n", error);
        return EXIT_LOAD;
    }
    if (abi.describe) {
        char line[2048];
        abi.describe(line, sizeof line);
        printf("describe: %s\n", line);
    }

    fill_f32(a_gate, FF_A, EMBD, 1);
    fill_f32(a_up, FF_A, EMBD, 2);
    fill_f32(a_down, EMBD, FF_A, 3);
    fill_q8_0(b_gate, FF_B, EMBD, 4);
    fill_q8_0(b_up, FF_B, EMBD, 5);
    fill_q8_0(b_down, EMBD, FF_B, 6);
    CpuExpertV2 experts[2];
    experts[0].gate = projection(a_gate, MEMRA_QTYPE_F32, FF_A, EMBD);
    experts[0].up = projection(a_up, MEMRA_QTYPE_F32, FF_A, EMBD);
    experts[0].down = projection(a_down, MEMRA_QTYPE_F32, EMBD, FF_A);
    experts[0].route_weight = 0.75f;
    /* A different n_ff for the second expert: only gate.out == up.out == down.in must chain. */
    experts[1].gate = projection(b_gate, MEMRA_QTYPE_Q8_0, FF_B, EMBD);
    experts[1].up = projection(b_up, MEMRA_QTYPE_Q8_0, FF_B, EMBD);
    experts[1].down = projection(b_down, MEMRA_QTYPE_Q8_0, EMBD, FF_B);
    experts[1].route_weight = -0.5f;

    float inputs[ROWS * EMBD];
    for (int i = 0; i < ROWS * EMBD; ++i) inputs[i] = (float)((i * 5) % 11 - 5) / 4.0f;
    const float route_weights[ROWS] = {1.0f, 0.5f, -2.0f};

    int32_t status;
    float out[ROWS * EMBD];
    double want[ROWS * EMBD];

    status = abi.moe_token(experts, 2, inputs, out, 2, error, sizeof error);
    printf("token: status %d%s%s\n", status, status ? ": " : "", status ? error : "");
    if (status) return EXIT_STATUS_BASE + status;
    memset(want, 0, sizeof want);
    reference(&experts[0], inputs, experts[0].route_weight, want);
    reference(&experts[1], inputs, experts[1].route_weight, want);
    const double token_err = relative_error(out, want, EMBD);
    printf("token: relative error %.3g (tolerance %.3g)\n", token_err, kTolerance);
    if (!(token_err <= kTolerance)) return EXIT_WRONG;

    status = abi.expert_rows(&experts[1], inputs, ROWS, route_weights, out, 2, error, sizeof error);
    printf("rows: status %d%s%s\n", status, status ? ": " : "", status ? error : "");
    if (status) return EXIT_STATUS_BASE + status;
    memset(want, 0, sizeof want);
    for (int r = 0; r < ROWS; ++r) reference(&experts[1], inputs + r * EMBD, route_weights[r], want + r * EMBD);
    const double rows_err = relative_error(out, want, ROWS * EMBD);
    printf("rows: relative error %.3g (tolerance %.3g)\n", rows_err, kTolerance);
    if (!(rows_err <= kTolerance)) return EXIT_WRONG;

    uint64_t hits = 0, misses = 0, read_bytes = 0, resident = 0, prepare = 0, io = 0, insert = 0, compute = 0;
    abi.cache_stats(&hits, &misses, &read_bytes, &resident);
    abi.profile_stats(&prepare, &io, &insert, &compute);
    printf("stats: cache hits %llu misses %llu; prepare %llu ns, compute %llu ns\n",
           (unsigned long long)hits, (unsigned long long)misses, (unsigned long long)prepare,
           (unsigned long long)compute);
    memra_loaded_abi_close(&abi);
    printf("ok\n");
    return 0;
}
