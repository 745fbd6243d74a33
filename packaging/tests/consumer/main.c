/* A downstream program linked against the installed library (not dlopen'ed): checks the ABI
 * version, evaluates one tiny F32 expert against a hand computation, and, when given a
 * directory, that the backend plugin the library loaded came from there. */
#include <memra/cpu_experts.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { N = 32 };

static void projection(CpuProjectionV2 *p, const float *w, int in, int out) {
    memset(p, 0, sizeof *p);
    p->weights = (const uint8_t *)w;
    p->qtype = MEMRA_QTYPE_F32;
    p->in_features = in;
    p->out_features = out;
    p->row_bytes = (size_t)in * sizeof(float);
    p->byte_len = p->row_bytes * (size_t)out;
    p->file_fd = -1;
    p->scale = 1.0f;
}

/* Every mapped memra-backend-*.so of this process must lie in dir (when dir is not NULL); the
 * last one seen is copied to path. Returns the number that do not. */
static int loaded_backends(const char *dir, char *path, size_t len) {
    char line[4096];
    int outside = 0;
    FILE *maps = fopen("/proc/self/maps", "r");
    path[0] = '\0';
    if (!maps) return 1;
    while (fgets(line, sizeof line, maps)) {
        char *slash = strchr(line, '/');
        if (slash && strstr(slash, "/memra-backend-")) {
            size_t n = dir ? strlen(dir) : 0;
            slash[strcspn(slash, "\n")] = '\0';
            if (dir && (strncmp(slash, dir, n) != 0 || slash[n] != '/')) {
                fprintf(stderr, "backend plugin %s is not from %s\n", slash, dir);
                ++outside;
            }
            snprintf(path, len, "%s", slash);
        }
    }
    fclose(maps);
    return outside;
}

int main(int argc, char **argv) {
    static float gate[N * N], up[N * N], down[N * N], x[N], out[N];
    double expect[N];
    CpuExpertV2 e;
    char error[512] = "", backend[4096];
    int i, j, status;

    if (memra_cpu_experts_abi_version() != MEMRA_CPU_EXPERTS_ABI_VERSION) {
        fprintf(stderr, "abi version %u, header says %u\n", memra_cpu_experts_abi_version(),
                MEMRA_CPU_EXPERTS_ABI_VERSION);
        return 1;
    }
    for (i = 0; i < N * N; ++i) {
        gate[i] = (float)((i % 7) - 3) / 16.0f;
        up[i] = (float)((i % 5) - 2) / 8.0f;
        down[i] = (float)((i % 3) - 1) / 4.0f;
    }
    for (i = 0; i < N; ++i) x[i] = (float)((i % 9) - 4) / 4.0f;
    projection(&e.gate, gate, N, N);
    projection(&e.up, up, N, N);
    projection(&e.down, down, N, N);
    e.route_weight = 0.5f;

    status = memra_cpu_moe_token_v2(&e, 1, x, out, 1, error, sizeof error);
    if (status != 0) {
        fprintf(stderr, "memra_cpu_moe_token_v2: status %d: %s\n", status, error);
        return 1;
    }
    {
        double h[N];
        for (j = 0; j < N; ++j) {
            double g = 0, u = 0;
            for (i = 0; i < N; ++i) {
                g += (double)gate[j * N + i] * x[i];
                u += (double)up[j * N + i] * x[i];
            }
            h[j] = g / (1.0 + exp(-g)) * u;
        }
        for (j = 0; j < N; ++j) {
            double d = 0;
            for (i = 0; i < N; ++i) d += (double)down[j * N + i] * h[i];
            expect[j] = 0.5 * d;
        }
    }
    for (j = 0; j < N; ++j) {
        if (fabs(out[j] - expect[j]) > 1e-4 * (1.0 + fabs(expect[j]))) {
            fprintf(stderr, "output[%d] = %.9g, expected %.9g\n", j, out[j], expect[j]);
            return 1;
        }
    }
    if (loaded_backends(argc > 1 ? argv[1] : NULL, backend, sizeof backend) != 0) return 1;
    if (argc > 1 && !backend[0]) {
        fprintf(stderr, "no backend plugin mapped\n");
        return 1;
    }
    printf("abi %u, token ok, backend %s\n", memra_cpu_experts_abi_version(), backend);
    return 0;
}
