// The entry point of a test-only module memra-backend-<name>_emulated.so (the test builds of
// plugins/backends.table: avxvnni_emulated, the AVX-VNNI kernels with vpdpbusd emulated on
// AVX2; amx_emulated, the AMX rows-path kernels with the tiles emulated in AVX-512), packaged as
// a plugin so that the core's loader gates it by its manifest and a forced registry can run
// full calls on it. It lives in its own directory, which the library never searches. Compiled
// without ISA flags: it only returns the address of the constant table, MEMRA_TEST_BUILD_TABLE_FN.
#include "memra/backend.h"

extern "C" const memra_backend_v2 *MEMRA_TEST_BUILD_TABLE_FN(void);

extern "C" __attribute__((visibility("default"))) const memra_backend_v2 *memra_backend_entry_v2(void) {
    return MEMRA_TEST_BUILD_TABLE_FN();
}
