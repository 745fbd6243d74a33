/* The internal interface between the core library and its backend plugins, version 2.
 *
 * A plugin is a shared module exporting one C function, MEMRA_BACKEND_ENTRY_SYMBOL, that returns
 * a pointer to a static, constant table. The table is plain C (no C++ types, no Boost) so that it
 * survives different compilers and flags across the .so boundary.
 *
 * Loading a module runs its constructors, and a module compiled with wider ISA flags can execute
 * an illegal instruction right there. The core therefore decides from the manifest installed
 * beside each plugin (memra-backend-NAME.manifest: name, interface, priority, required features)
 * whether to dlopen it at all; the table's own required_features must match the manifest.
 * Plugins keep all ISA-specific code in functions reached through the table, never in code that
 * runs at load time (no dynamic initialisers in kernel translation units).
 *
 * Version 2 (version 1 had one kernel per qtype that had to serve both paths, in ggml's layout):
 * a plugin may serve the token path (gemv), the rows path (gemm) or both for a qtype, and may
 * consume the weights in a layout of its own, made by its repack function. The core picks per
 * qtype AND per path the highest-priority plugin serving that path, so a plugin that speeds up
 * only the rows path of a few formats (AMX tiles) leaves everything else to the plugins below it.
 * A plugin built for another interface is skipped, with the reason in the load log. */
#ifndef MEMRA_BACKEND_H
#define MEMRA_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MEMRA_BACKEND_INTERFACE_VERSION 2u
#define MEMRA_BACKEND_ENTRY_SYMBOL "memra_backend_entry_v2"

/* CPU features a plugin may require, as bit numbers in memra_backend_v2::required_features
 * (memra_cpu_feature, MEMRA_CPU_BIT): one list, memra/cpu_feature_list.h. A feature counts as
 * present only when the CPU reports it (CPUID) and the OS saves the register state it needs
 * (XGETBV); the manifest names are the Linux /proc/cpuinfo spellings. */
#include "memra/cpu_feature_list.h"

/* The activation formats a kernel consumes. Each has one canonical byte layout, identical to
 * ggml's (F32 and BF16: plain arrays; Q8_0: 34-byte blocks of 32; Q8_K: 292-byte blocks of 256),
 * and one canonical quantizer (see plugins/common/quantize.h), so that any plugin's kernel can
 * consume any plugin's quantized activations and all of them agree bit for bit. */
typedef enum memra_act_format {
    MEMRA_ACT_F32 = 0,
    MEMRA_ACT_BF16 = 1,
    MEMRA_ACT_Q8_0 = 2,
    MEMRA_ACT_Q8_K = 3,
    MEMRA_ACT_FORMAT_COUNT = 4
} memra_act_format;

/* Weight layouts. Layout 0 is ggml's: the rows exactly as a GGUF file stores them, which is what
 * the caller's memory holds and what dequantize_row reads. Any other id is a plugin's own
 * arrangement of the same bytes (tiles of interleaved rows, say); the plugin that declares it
 * provides repack and its kernels then read only that layout. Ids are unique per plugin build:
 * a plugin names its layouts after itself (e.g. 'A','M','X',n), so caches keyed by layout never
 * confuse two plugins' arrangements. */
#define MEMRA_LAYOUT_GGML 0u

/* One weight format served by a plugin. `n` is the row length in values (a multiple of the
 * qtype's block size); `w` points at the first of `rows` consecutive rows, each `row_bytes`
 * (in the kernel's layout: row r of a repacked matrix starts at r * row_bytes for r a multiple
 * of row_group, and `rows` is a multiple of row_group or reaches the matrix's last row). */
typedef struct memra_kernel_v2 {
    int32_t qtype;      /* ggml type id */
    int32_t act_format; /* memra_act_format this kernel's dot products consume */
    uint32_t layout;    /* MEMRA_LAYOUT_GGML, or the plugin's own (then repack is set) */
    int32_t row_group;  /* rows arranged together in `layout` (1 for ggml's); tiles start at multiples */

    /* Token path: y[r] = dot(row r, xq) for r < rows. NULL: this plugin leaves the token path
     * of this qtype to a lower-priority plugin. */
    void (*gemv)(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq,
                 float *y);

    /* Rows path: y[j * ldy + r] = dot(row r, xq_j) for r < rows and j < m (1 <= m <= 64), with
     * xq_j = (const uint8_t *)xq + j * xq_stride. Each result must equal what the token path
     * computes for that row and activation, bit for bit, whichever plugin serves it; a fast
     * kernel decodes each block once for all m. NULL: the rows path is left to a lower plugin. */
    void (*gemm)(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq,
                 size_t xq_stride, int32_t m, float *y, size_t ldy);

    /* out[0..n) = the values of one row in ggml's layout, decoded exactly as ggml's dequantizer
     * does. Required for layout 0; NULL allowed otherwise. */
    void (*dequantize_row)(const uint8_t *row, int32_t n, float *out);

    /* Layout != 0 only (NULL for ggml's): dst = the `rows` rows at src (ggml's layout, row_bytes
     * each, rows a multiple of row_group or the whole matrix) in this kernel's layout, the same
     * rows * row_bytes bytes. Pure: no state, any thread. Groups are independent: the core
     * repacks a matrix in pieces of whole groups (the last piece reaching the matrix's last row,
     * which may end in a partial group), each piece into the same bytes it would occupy in the
     * whole, src and dst never overlapping (core/weights/repack.h). */
    void (*repack)(const uint8_t *src, size_t row_bytes, int32_t rows, int32_t n, uint8_t *dst);
} memra_kernel_v2;

/* Which vendor's cores a plugin's kernels should favour, where a format has two forms with the
 * same results (bit for bit) whose speed differs by microarchitecture: an AVX-512 two-source
 * permute is one uop on AMD Zen 4 / 5 and three on Intel Sapphire Rapids, so a decoder built on
 * them wins on one vendor and loses on the other (docs/architecture.md, "Kernel tuning"). The core
 * derives it from CPUID's vendor string, or MEMRA_CPU_EXPERT_TUNING, and passes it to every plugin
 * it loads (memra_backend_v2::tune). GENERIC: no vendor assumed, each format's default form. */
typedef enum memra_cpu_tuning {
    MEMRA_TUNING_GENERIC = 0,
    MEMRA_TUNING_INTEL = 1,
    MEMRA_TUNING_AMD = 2
} memra_cpu_tuning;

typedef struct memra_backend_v2 {
    uint32_t interface_version; /* MEMRA_BACKEND_INTERFACE_VERSION */
    uint32_t struct_size;       /* sizeof(memra_backend_v2) as the plugin was compiled */
    const char *name;           /* "scalar", "avx2", ... (the MEMRA_CPU_EXPERT_BACKEND value) */
    const char *description;    /* one line for logs and memra-cpu-info */
    uint64_t required_features; /* MEMRA_CPU_BIT(...) mask; must equal the manifest's */

    /* quantize[f](x, n, out): x[0..n) -> activation format f (n a multiple of f's block). NULL
     * where the plugin has no quantizer of its own for f; the core then uses another plugin's,
     * which is valid because every quantizer of a format produces identical bytes. */
    void (*quantize[MEMRA_ACT_FORMAT_COUNT])(const float *x, int32_t n, void *out);

    int32_t kernel_count;
    const memra_kernel_v2 *kernels; /* at most one per qtype */

    /* tune(memra_cpu_tuning): which kernel forms to use from now on. NULL: the plugin has nothing
     * to tune. The core calls it as it loads the plugin, before any of its kernels runs, with the
     * process's one value (core/dispatch/tuning.h), so several loaders in one process agree; it
     * may still be called while another thread runs kernels (a relaxed atomic in the plugin). It
     * must never change a result, only which of equivalent forms computes it. Added after
     * kernels: a table whose struct_size ends before it has no tune. */
    void (*tune)(int32_t tuning);
} memra_backend_v2;

/* The smallest table this interface version accepts (one built before tune was added). */
#define MEMRA_BACKEND_V2_MIN_SIZE offsetof(memra_backend_v2, tune)

typedef const memra_backend_v2 *(*memra_backend_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif
