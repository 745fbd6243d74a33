/* Loads the library the way the memra engine does: dlopen(path, RTLD_NOW | RTLD_LOCAL) and every
 * entry point looked up by name with dlsym. Header-only C, so that the C ABI client and the C++
 * tools share it without linking anything of the project (the engine links nothing either). */
#ifndef MEMRA_TOOLS_ABI_LOADER_H
#define MEMRA_TOOLS_ABI_LOADER_H

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "memra/cpu_experts.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct memra_loaded_abi {
    void *handle;
    /* Required by the engine. */
    uint32_t (*abi_version)(void);
    int32_t (*moe_token)(const CpuExpertV2 *, int32_t, const float *, float *, int32_t, char *,
                         size_t);
    void (*cache_stats)(uint64_t *, uint64_t *, uint64_t *, uint64_t *);
    void (*profile_stats)(uint64_t *, uint64_t *, uint64_t *, uint64_t *);
    /* Probed by the engine; this library exports both. */
    int32_t (*prefetch)(const CpuProjectionV2 *, int32_t, char *, size_t);
    int32_t (*expert_rows)(const CpuExpertV2 *, const float *, int32_t, const float *, float *,
                           int32_t, char *, size_t);
    /* The project's extension; NULL when absent. */
    size_t (*describe)(char *, size_t);
} memra_loaded_abi;

/* Copies dlsym's result into a function pointer without the object/function pointer cast that
 * ISO C leaves undefined (POSIX guarantees the representation is the same). */
static inline int memra_loaded_abi_resolve(void *handle, const char *name, void *fn_ptr, char *err,
                                        size_t err_len) {
    void *sym = dlsym(handle, name);
    memcpy(fn_ptr, &sym, sizeof sym);
    if (!sym && err && err_len) snprintf(err, err_len, "dlsym(%s) failed", name);
    return sym != NULL;
}

/* 0 on success. On failure err holds why (dlopen's message or the missing symbol) and nothing
 * stays loaded. A library whose abi_version is not 2 is refused. */
static inline int memra_loaded_abi_open(const char *path, memra_loaded_abi *abi, char *err,
                                         size_t err_len) {
    memset(abi, 0, sizeof *abi);
    abi->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!abi->handle) {
        if (err && err_len) snprintf(err, err_len, "dlopen(%s): %s", path, dlerror());
        return -1;
    }
    int ok = memra_loaded_abi_resolve(abi->handle, "memra_cpu_experts_abi_version", &abi->abi_version, err, err_len) &&
             memra_loaded_abi_resolve(abi->handle, "memra_cpu_moe_token_v2", &abi->moe_token, err, err_len) &&
             memra_loaded_abi_resolve(abi->handle, "memra_cpu_expert_cache_stats_v2", &abi->cache_stats, err, err_len) &&
             memra_loaded_abi_resolve(abi->handle, "memra_cpu_expert_profile_stats_v2", &abi->profile_stats, err, err_len) &&
             memra_loaded_abi_resolve(abi->handle, "memra_cpu_expert_prefetch_v2", &abi->prefetch, err, err_len) &&
             memra_loaded_abi_resolve(abi->handle, "memra_cpu_expert_rows_v2", &abi->expert_rows, err, err_len);
    if (ok && abi->abi_version() != MEMRA_CPU_EXPERTS_ABI_VERSION) {
        if (err && err_len) snprintf(err, err_len, "%s: ABI version %u, expected %u", path,
                                     abi->abi_version(), MEMRA_CPU_EXPERTS_ABI_VERSION);
        ok = 0;
    }
    if (!ok) {
        dlclose(abi->handle);
        memset(abi, 0, sizeof *abi);
        return -1;
    }
    memra_loaded_abi_resolve(abi->handle, "memra_cpu_experts_describe", &abi->describe, NULL, 0);
    return 0;
}

static inline void memra_loaded_abi_close(memra_loaded_abi *abi) {
    if (abi->handle) dlclose(abi->handle);
    memset(abi, 0, sizeof *abi);
}

#ifdef __cplusplus
}
#endif

#endif
