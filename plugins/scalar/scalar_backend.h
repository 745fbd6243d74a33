// The scalar reference backend's table (baseline x86-64, every weight format). Exposed as a
// plain function so that the tests and the conformance kit can use the reference kernels
// in-process, without loading the plugin module.
#pragma once

#include "memra/backend.h"

extern "C" const memra_backend_v2 *memra_scalar_backend(void);
