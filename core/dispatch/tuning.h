// The kernel tuning every plugin is given (memra_backend_v2::tune): which vendor's cores the
// kernels favour where a format has two forms with the same bits (abi/include/memra/backend.h).
// One value per process: a plugin module is mapped once however many loaders open it, so its
// tuning is the process's, whatever registry or tool loads it.
#pragma once

#include <cstdint>
#include <string>

#include "dispatch/cpu_features.h"

namespace memra {

// The tuning for a MEMRA_CPU_EXPERT_TUNING value ("auto": from the CPU's vendor string; "intel",
// "amd", "generic"); false for any other value.
bool parse_kernel_tuning(const std::string &setting, const CpuFeatures &cpu, int32_t &tuning);

// Whether `setting` is a value MEMRA_CPU_EXPERT_TUNING takes ("auto" or a tuning's name).
bool is_kernel_tuning_setting(const std::string &setting);

// The process's tuning: the environment's setting (read_settings) on this CPU, decided once.
// An invalid setting counts as auto here; the settings' problem makes the library refuse to
// compute anyway.
int32_t process_kernel_tuning();

// "generic", "intel", "amd".
const char *kernel_tuning_name(int32_t tuning);

}  // namespace memra
