// The amx plugin module's only export. Compiled without ISA flags: it only returns the address of
// the constant table built by memra_simd_amx (the tile kernels, compiled with -mamx-int8 ...).
#include "memra/backend.h"

extern "C" const memra_backend_v2 *memra_simd_amx_backend(void);

extern "C" __attribute__((visibility("default"))) const memra_backend_v2 *memra_backend_entry_v2(void) {
    return memra_simd_amx_backend();
}
