#include "dispatch/tuning.h"

#include "dispatch/settings.h"
#include "memra/backend.h"

namespace memra {

bool parse_kernel_tuning(const std::string &setting, const CpuFeatures &cpu, int32_t &tuning) {
    if (setting == "auto" || setting.empty()) {
        tuning = cpu.vendor == "GenuineIntel"   ? MEMRA_TUNING_INTEL
                 : cpu.vendor == "AuthenticAMD" ? MEMRA_TUNING_AMD
                                                : MEMRA_TUNING_GENERIC;
        return true;
    }
    for (int32_t t : {MEMRA_TUNING_GENERIC, MEMRA_TUNING_INTEL, MEMRA_TUNING_AMD})
        if (setting == kernel_tuning_name(t)) {
            tuning = t;
            return true;
        }
    return false;
}

bool is_kernel_tuning_setting(const std::string &setting) {
    int32_t t = MEMRA_TUNING_GENERIC;
    return !setting.empty() && parse_kernel_tuning(setting, CpuFeatures{}, t);
}

int32_t process_kernel_tuning() {
    static const int32_t tuning = [] {
        int32_t t = MEMRA_TUNING_GENERIC;
        if (!parse_kernel_tuning(read_settings().tuning, detect_cpu_features(), t))
            parse_kernel_tuning("auto", detect_cpu_features(), t);
        return t;
    }();
    return tuning;
}

const char *kernel_tuning_name(int32_t tuning) {
    switch (tuning) {
    case MEMRA_TUNING_INTEL: return "intel";
    case MEMRA_TUNING_AMD: return "amd";
    default: return "generic";
    }
}

}  // namespace memra
