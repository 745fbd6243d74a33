// The C boundary: the exported memra_* entry points. Nothing unwinds past here: every failure
// becomes a status and a message that fits the caller's buffer, and outputs stay untouched.
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "error.h"
#include "library.h"
#include "memra/cpu_experts.h"
#include "compute/moe.h"
#include "stats.h"
#include "compute/validate.h"

#define MEMRA_EXPORT extern "C" __attribute__((visibility("default")))

namespace memra {
namespace {

void write_message(char *error, size_t error_len, const char *message) {
    if (!error || error_len == 0) return;
    const size_t n = std::min(std::strlen(message), error_len - 1);
    std::memcpy(error, message, n);
    error[n] = '\0';
}

// Runs `body`, translating every exception into a status code. The library's registry comes first: when
// the backend choice failed (status 5) nothing else can be done, whatever the arguments.
template <class Body>
int32_t guarded(char *error, size_t error_len, Body &&body) noexcept {
    try {
        const BackendRegistry &registry = Library::instance().registry();
        if (!registry.usable()) fail(MEMRA_STATUS_NO_BACKEND, registry.unusable_reason());
        body(registry);
        return MEMRA_STATUS_OK;
    } catch (const Error &e) {
        write_message(error, error_len, e.what());
        return e.status();
    } catch (const std::bad_alloc &) {
        write_message(error, error_len, "out of memory");
        return MEMRA_STATUS_OUT_OF_MEMORY;
    } catch (const std::exception &e) {
        write_message(error, error_len, (std::string("internal error: ") + e.what()).c_str());
        return MEMRA_STATUS_INTERNAL;
    } catch (...) {
        write_message(error, error_len, "internal error: unknown exception");
        return MEMRA_STATUS_INTERNAL;
    }
}

// Make the library's context (settings, backend choice) as the library loads, so
// MEMRA_CPU_EXPERT_LOG=1 reports at load and the first compute call does not pay for plugin
// discovery.
__attribute__((constructor)) void initialise_at_load() {
    try {
        (void)Library::instance();
    } catch (...) {
        // Reported again, with a status, by the first call.
    }
}

}  // namespace
}  // namespace memra

using memra::guarded;

MEMRA_EXPORT uint32_t memra_cpu_experts_abi_version(void) { return MEMRA_CPU_EXPERTS_ABI_VERSION; }

MEMRA_EXPORT int32_t memra_cpu_moe_token_v2(const CpuExpertV2 *experts, int32_t count,
                                            const float *input, float *output, int32_t threads,
                                            char *error, size_t error_len) {
    return guarded(error, error_len, [&](const memra::BackendRegistry &registry) {
        memra::StopWatch validation;
        memra::validate_token_call(experts, count, input, output, threads);
        validation.lap_into(memra::stats().prepare_ns);
        memra::moe_token(registry, experts, count, input, output, threads);
    });
}

MEMRA_EXPORT int32_t memra_cpu_expert_rows_v2(const CpuExpertV2 *expert, const float *inputs,
                                              int32_t rows, const float *route_weights,
                                              float *outputs, int32_t threads, char *error,
                                              size_t error_len) {
    return guarded(error, error_len, [&](const memra::BackendRegistry &registry) {
        memra::StopWatch validation;
        memra::validate_rows_call(expert, inputs, rows, route_weights, outputs, threads);
        validation.lap_into(memra::stats().prepare_ns);
        memra::expert_rows(registry, *expert, inputs, rows, route_weights, outputs, threads);
    });
}

MEMRA_EXPORT int32_t memra_cpu_expert_prefetch_v2(const CpuProjectionV2 *projections, int32_t count,
                                                  char *error, size_t error_len) {
    return guarded(error, error_len, [&](const memra::BackendRegistry &) {
        if (count < 1) memra::fail(MEMRA_STATUS_INVALID_ARGUMENT, "count " + std::to_string(count) + " < 1");
        if (!projections) memra::fail(MEMRA_STATUS_INVALID_ARGUMENT, "projections is NULL");
        for (int32_t i = 0; i < count; ++i)
            memra::validate_projection(projections[i], ("projection " + std::to_string(i)).c_str());
        memra::StopWatch queueing;
        memra::Library::instance().prefetcher().enqueue(projections, count);
        queueing.lap_into(memra::stats().prepare_ns);
    });
}

MEMRA_EXPORT void memra_cpu_expert_cache_stats_v2(uint64_t *hits, uint64_t *misses,
                                                  uint64_t *read_bytes, uint64_t *resident_bytes) {
    const memra::Stats &s = memra::stats();
    if (hits) *hits = s.cache_hits.load(std::memory_order_relaxed);
    if (misses) *misses = s.cache_misses.load(std::memory_order_relaxed);
    if (read_bytes) *read_bytes = s.read_bytes.load(std::memory_order_relaxed);
    if (resident_bytes) *resident_bytes = s.resident_bytes.load(std::memory_order_relaxed);
}

MEMRA_EXPORT void memra_cpu_expert_profile_stats_v2(uint64_t *prepare_ns, uint64_t *io_ns,
                                                    uint64_t *insert_ns, uint64_t *compute_ns) {
    const memra::Stats &s = memra::stats();
    if (prepare_ns) *prepare_ns = s.prepare_ns.load(std::memory_order_relaxed);
    if (io_ns) *io_ns = s.io_ns.load(std::memory_order_relaxed);
    if (insert_ns) *insert_ns = s.insert_ns.load(std::memory_order_relaxed);
    if (compute_ns) *compute_ns = s.compute_ns.load(std::memory_order_relaxed);
}

MEMRA_EXPORT size_t memra_cpu_experts_describe(char *buf, size_t buf_len) {
    try {
        memra::Library &library = memra::Library::instance();
        std::string line = library.registry().describe();
        if (library.registry().usable())
            line += memra::describe_cache(library.cache().budget()) + memra::describe_placement(library.numa());
        memra::write_message(buf, buf_len, line.c_str());
        return line.size();
    } catch (...) {
        memra::write_message(buf, buf_len, "memra-cpu-experts: unusable: internal error");
        return 0;
    }
}
