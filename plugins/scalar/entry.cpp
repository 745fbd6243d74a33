// The scalar plugin module's only export: the entry point the core looks up after dlopen.
#include "memra/backend.h"
#include "scalar/scalar_backend.h"

extern "C" __attribute__((visibility("default"))) const memra_backend_v2 *memra_backend_entry_v2(void) {
    return memra_scalar_backend();
}
