// memra-bench-micro: Google Benchmark micro-benchmarks of the plugins' kernels, called directly
// through their plugin tables (memra/backend.h), not through the library: gemv (the token path's
// kernel) and gemm with m = 4, 8 and 32 (the rows path's: several decode streams sharing an expert,
// and a batch), per format, per plugin this CPU can load. The
// matrix is one gate projection of the default shape (1536 rows of 4096 values) and stays in the
// caches between iterations: this measures kernel compute speed, the part memra-bench's
// DRAM-bound figures hide. bytes_per_second counts weight bytes. down32 is gemm32 on the down
// projection's shape (4096 rows of 1536 values): a rows call spends as much on it as on each of
// the other two, and its rows are 2.7x shorter, so a kernel's cost per row group weighs more there.
//
//   memra-bench-micro --benchmark_filter='gemv/avx512/.*'
//   memra-bench-micro --benchmark_filter='(gemm|down)32/(amx|avx512)/(q4_K|q8_0|q4_0)$'
//   memra-bench-micro --benchmark_filter='gemm(4|8|32)/avx512bf16/q2_K$'
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "dispatch/cpu_features.h"
#include "formats.h"
#include "library_path.h"
#include "dispatch/plugin_loader.h"
#include "synthetic_weights.h"

namespace {

constexpr int32_t kBatch = 32;

// A projection's shape: output rows x input values.
struct Shape {
    int32_t rows, in;
};
constexpr Shape kGate{1536, 4096}, kDown{4096, 1536};

// Weights and quantized activations of one format and shape, made once and shared by every plugin.
struct Operands {
    std::vector<uint8_t> weights;
    size_t row_bytes = 0;
    std::vector<uint8_t> activations;  // kBatch rows
    size_t act_stride = 0;
};

const Operands &operands(int32_t qtype, int32_t act_format, Shape shape) {
    static std::map<std::tuple<int32_t, int32_t, int32_t>, std::unique_ptr<Operands>> cache;
    std::unique_ptr<Operands> &slot = cache[{qtype, shape.rows, shape.in}];
    if (!slot) {
        slot = std::make_unique<Operands>();
        std::mt19937_64 rng(42);
        slot->weights = memra::expertkit::random_weights(qtype, shape.rows, shape.in, rng);
        slot->row_bytes = memra::expertkit::row_bytes(qtype, shape.in);
        for (int32_t j = 0; j < kBatch; ++j) {
            const std::vector<float> x = memra::expertkit::random_input(shape.in, rng);
            const std::vector<uint8_t> q = memra::expertkit::quantize_activation(act_format, x.data(), shape.in);
            slot->act_stride = q.size();
            slot->activations.insert(slot->activations.end(), q.begin(), q.end());
        }
    }
    return *slot;
}

void gemv(benchmark::State &state, const memra_kernel_v2 *k) {
    const Operands &op = operands(k->qtype, k->act_format, kGate);
    std::vector<float> y(kGate.rows);
    for (auto _ : state) {
        k->gemv(op.weights.data(), op.row_bytes, kGate.rows, kGate.in, op.activations.data(), y.data());
        benchmark::DoNotOptimize(y.data());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(op.weights.size()));
}

// The rows path with the first m of the kBatch activations.
void gemm(benchmark::State &state, const memra_kernel_v2 *k, int32_t m, Shape shape) {
    const Operands &op = operands(k->qtype, k->act_format, shape);
    std::vector<float> y(size_t(shape.rows) * size_t(m));
    for (auto _ : state) {
        k->gemm(op.weights.data(), op.row_bytes, shape.rows, shape.in, op.activations.data(), op.act_stride, m,
                y.data(), shape.rows);
        benchmark::DoNotOptimize(y.data());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(op.weights.size()));
    state.counters["rows/s"] = benchmark::Counter(double(state.iterations()) * m, benchmark::Counter::kIsRate);
}

// The plugins beside the library this tool would load (or in MEMRA_CPU_EXPERT_PLUGIN_DIR), each
// loaded only when this CPU runs it (the core's manifest-first loader).
std::vector<memra::PluginRecord> load_usable_plugins() {
    std::vector<std::string> dirs;
    if (const char *env = std::getenv("MEMRA_CPU_EXPERT_PLUGIN_DIR"); env && *env) dirs.push_back(env);
    const std::string lib = memra::tools::default_library_path();
    dirs.push_back(lib.substr(0, lib.find_last_of('/') + 1) + MEMRA_BACKEND_SUBDIR);
    return memra::load_plugins(dirs, memra::detect_cpu_features().usable);
}

}  // namespace

int main(int argc, char **argv) {
    static const std::vector<memra::PluginRecord> plugins = load_usable_plugins();
    for (const memra::PluginRecord &p : plugins) {
        if (!p.loaded) continue;
        for (int32_t i = 0; i < p.table->kernel_count; ++i) {
            const memra_kernel_v2 *k = &p.table->kernels[i];
            const std::string name = std::string(p.table->name) + "/" + memra::expertkit::qtype_name(k->qtype);
            // A plugin may serve one path only (amx: gemm): the other is a lower plugin's.
            if (k->gemv) benchmark::RegisterBenchmark(("gemv/" + name).c_str(), gemv, k);
            if (k->gemm) {
                for (const int32_t m : {4, 8, kBatch})
                    benchmark::RegisterBenchmark(("gemm" + std::to_string(m) + "/" + name).c_str(), gemm, k, m,
                                                 kGate);
                benchmark::RegisterBenchmark(("down32/" + name).c_str(), gemm, k, kBatch, kDown);
            }
        }
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
