// The kernel tuning the core gives this plugin (memra_backend_v2::tune, abi/include/memra/backend.h):
// which vendor's cores the kernels favour where a format has two forms with the same bits. Until
// the core calls tune (a tool that loads the plugin by hand), every format takes its generic form.
#pragma once

#include <atomic>
#include <cstdint>

#include "isa_select.h"
#include "memra/backend.h"

namespace memra::simd::MEMRA_SIMD_NS {

// Relaxed: the value only picks among forms with identical results, and a second loader in the
// process passes the same value (core/dispatch/tuning.h). Constant-initialised: loading the
// plugin runs no code.
inline std::atomic<int32_t> g_kernel_tuning{MEMRA_TUNING_GENERIC};

inline void tune_kernels(int32_t tuning) { g_kernel_tuning.store(tuning, std::memory_order_relaxed); }
inline bool tuned_for(memra_cpu_tuning tuning) { return g_kernel_tuning.load(std::memory_order_relaxed) == tuning; }

}  // namespace memra::simd::MEMRA_SIMD_NS
