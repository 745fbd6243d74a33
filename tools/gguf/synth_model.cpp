#include "synth_model.h"

#include <cmath>
#include <random>

#include "cli.h"
#include "gguf_writer.h"
#include "memra/qtypes.h"
#include "moe_layout.h"
#include "progress.h"
#include "quantize.h"

namespace memra::gguf_tool {
namespace {

constexpr const char *kProjections[3] = {"gate", "up", "down"};

// Row length and rows per expert of projection p (0 gate, 1 up, 2 down).
uint32_t row_length(const ModelShape &s, int p) { return p == 2 ? s.n_ff : s.n_embd; }
uint32_t rows(const ModelShape &s, int p) { return p == 2 ? s.n_embd : s.n_ff; }

// SplitMix64: a well-mixed seed for each (layer, projection, expert), so that every expert's
// weights depend only on the seed and its position, not on the order they are generated in.
uint64_t mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// One expert's matrix, rows x in values, like a trained FFN weight: N(0, sigma_r^2) per row with
// sigma_r = exp(0.25 N(0,1)) / sqrt(in) (rows differ in scale, as trained rows do; the 1/sqrt(in)
// keeps activations O(1) through the layer), and 0.5% of values 4x wider (the outliers quantizers
// must cope with).
void synth_matrix(uint64_t seed, uint32_t rows, uint32_t in, std::vector<float> &w) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    w.resize(size_t(rows) * in);
    for (uint32_t r = 0; r < rows; ++r) {
        const float sigma = std::exp(0.25f * normal(rng)) / std::sqrt(float(in));
        for (uint32_t i = 0; i < in; ++i) w[size_t(r) * in + i] = sigma * normal(rng) * (uniform(rng) < 0.005f ? 4.0f : 1.0f);
    }
}

}  // namespace

uint32_t parse_qtype(const std::string &option, const std::string &name) {
    const auto id = gguf::tensor_type_from_name(name);
    if (!id || !gguf::library_supports(*id))
        throw UsageError("--" + option + " '" + name + "' is not one of the library's formats (" +
                         std::string(MEMRA_QTYPE_NAMES_SPACED + 1) + ")");
    return *id;
}

void check_spec(const SynthSpec &spec) {
    if (spec.formats.size() != spec.shape.layers)
        throw UsageError(std::to_string(spec.formats.size()) + " layer formats for " + std::to_string(spec.shape.layers) + " layers");
    for (const LayerFormats &f : spec.formats)
        for (int p = 0; p < 3; ++p) {
            const memra_qtype_info *q = memra_qtype_find(int32_t(f[p]));
            if (!q) throw UsageError("ggml type " + std::to_string(f[p]) + " is not one of the library's formats");
            if (row_length(spec.shape, p) % uint32_t(q->block_elems) != 0)
                throw UsageError(std::string(kProjections[p]) + " rows have " + std::to_string(row_length(spec.shape, p)) +
                                 " values, not a multiple of " + q->name + "'s block of " + std::to_string(q->block_elems));
        }
}

uint64_t weight_bytes(const SynthSpec &spec) {
    const ModelShape &s = spec.shape;
    uint64_t n = 0;
    for (const LayerFormats &f : spec.formats)
        for (int p = 0; p < 3; ++p) n += quantize::row_bytes(int32_t(f[p]), row_length(s, p)) * rows(s, p) * s.n_expert;
    return n;
}

// The whole file: metadata, then per layer the gate, up and down expert tensors.
void write_model(const std::string &path, const SynthSpec &spec) {
    check_spec(spec);
    const ModelShape &s = spec.shape;
    gguf::Writer w(spec.alignment);
    const std::string a = s.architecture;
    w.add_string("general.architecture", a);
    w.add_string("general.name", "memra synthetic " + s.preset);
    w.add_u32(a + ".block_count", s.layers);
    w.add_u32(a + ".embedding_length", s.n_embd);
    w.add_u32(a + ".expert_count", s.n_expert);
    w.add_u32(a + ".expert_used_count", s.n_expert_used);
    w.add_u32(a + ".expert_feed_forward_length", s.n_ff);
    if (a == "llama") w.add_u32(a + ".feed_forward_length", s.n_ff);  // where llama.cpp reads Mixtral's
    w.add_u64("memra.synth.seed", spec.seed);
    for (uint32_t l = 0; l < s.layers; ++l)
        for (int p = 0; p < 3; ++p)
            w.add_tensor(gguf::expert_tensor_name(int(l), kProjections[p]), spec.formats[l][p],
                         {row_length(s, p), rows(s, p), s.n_expert});

    Progress progress("synth", uint64_t(s.layers) * 3, spec.progress);
    std::vector<uint8_t> bytes;
    w.write(path, [&](size_t index, const gguf::Writer::Sink &out) {
        const int p = int(index % 3);
        const int32_t qtype = int32_t(spec.formats[index / 3][p]);
        const uint32_t in = row_length(s, p), out_rows = rows(s, p);
        const size_t expert_bytes = quantize::row_bytes(qtype, in) * out_rows;
        bytes.resize(expert_bytes * s.n_expert);
#pragma omp parallel for num_threads(spec.threads) schedule(dynamic)
        for (int64_t e = 0; e < int64_t(s.n_expert); ++e) {
            std::vector<float> m;
            synth_matrix(mix(spec.seed ^ mix(index * 4096 + uint64_t(e))), out_rows, in, m);
            const std::vector<uint8_t> q = quantize::quantize_rows(qtype, m.data(), out_rows, in);
            std::copy(q.begin(), q.end(), bytes.begin() + int64_t(size_t(e) * expert_bytes));
        }
        out(bytes.data(), bytes.size());
        progress.update(index + 1);
    });
}

}  // namespace memra::gguf_tool
