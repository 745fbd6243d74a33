// The entry point of the test-only module memra-backend-avxvnni_emulated.so: the AVX-VNNI
// kernels with vpdpbusd emulated on AVX2 (plugins/avxvnni_emulated), packaged as a plugin so
// that the core's loader gates it by its manifest and a forced registry can run full calls on
// it. It lives in its own directory, which the library never searches. Compiled without ISA
// flags: it only returns the address of the constant table.
#include "memra/backend.h"

extern "C" const memra_backend_v2 *memra_simd_avxvnni_emulated_backend(void);

extern "C" __attribute__((visibility("default"))) const memra_backend_v2 *memra_backend_entry_v2(void) {
    return memra_simd_avxvnni_emulated_backend();
}
