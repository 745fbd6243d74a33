// Activation rounding, bit for bit against ggml's CPU backend: the bytes memra's canonical
// quantizer of each activation format (Q8_0, Q8_K, BF16; F32 is a copy) and every plugin's own
// quantizer produce, against those of ggml-cpu's from_float for that type
// (ggml_get_type_traits_cpu(type)->from_float of the CPU variant ggml's loader chose: what
// mul_mat and mul_mat_id run on src1 before the dots). Inputs: normal values at several scales,
// magnitudes spread over the whole float range, subnormals, zeros, one-hot blocks and exact
// rounding ties. BF16 also gets infinities and NaNs (Q8 formats have no defined result for them).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "formats.h"
#include "memra/cpu_experts.h"
#include "memra/qtypes.h"
#include "truth_env.h"

namespace memra::truth {
namespace {

constexpr int32_t kRow = 4096;  // a multiple of every activation block

int32_t ggml_type_of(int32_t act) {
    switch (act) {
    case MEMRA_ACT_Q8_0: return 8;    // GGML_TYPE_Q8_0
    case MEMRA_ACT_Q8_K: return 15;   // GGML_TYPE_Q8_K
    case MEMRA_ACT_BF16: return 30;   // GGML_TYPE_BF16
    default: return -1;
    }
}

struct Input {
    std::string name;
    std::vector<float> x;
};

std::vector<Input> inputs(int32_t act) {
    std::mt19937_64 rng(0x1905 + uint64_t(act));
    std::vector<Input> in;
    auto add = [&](const std::string &name, auto &&value) {
        Input i{name, std::vector<float>(kRow)};
        for (int32_t k = 0; k < kRow; ++k) i.x[size_t(k)] = value(k);
        in.push_back(std::move(i));
    };
    for (float sigma : {1.0f, 1e-3f, 37.0f}) {
        std::normal_distribution<float> d(0.0f, sigma);
        add("normal sigma " + std::to_string(sigma), [&](int32_t) { return d(rng); });
    }
    std::uniform_real_distribution<float> e(-149.0f, 127.9f);
    add("magnitudes 2^-149..2^128", [&](int32_t) { return (rng() & 1 ? 1.0f : -1.0f) * std::exp2(e(rng)); });
    std::uniform_real_distribution<float> sub(-1.0f, 1.0f);
    add("subnormals", [&](int32_t) { return sub(rng) * std::numeric_limits<float>::denorm_min() * 4096.0f; });
    add("zeros and negative zeros", [&](int32_t k) { return k % 3 ? 0.0f : -0.0f; });
    add("one-hot per 32", [&](int32_t k) { return k % 32 == 5 ? -3.25f : 0.0f; });
    // amax 127 makes Q8_0's and Q8_K's scale exactly 1 (and -1): every x.5 is a rounding tie.
    add("ties at scale 1", [&](int32_t k) { return k % 32 == 0 ? 127.0f : float(k % 64 - 32) + 0.5f; });
    add("ties at scale -1", [&](int32_t k) { return k % 256 == 7 ? -127.0f : float(k % 64 - 32) + 0.5f; });
    std::uniform_real_distribution<double> big(-3.4e38, 3.4e38);  // in double: the float width overflows
    add("near the float maximum", [&](int32_t) { return float(big(rng)); });
    if (act == MEMRA_ACT_BF16) {
        add("random bit patterns (NaN, inf, subnormal)", [&](int32_t) {
            const uint32_t b = uint32_t(rng());
            float f;
            std::memcpy(&f, &b, 4);
            return f;
        });
        // Halfway between two bf16 values, both parities: the ties of round-to-nearest-even.
        add("bf16 ties", [&](int32_t k) {
            const uint32_t b = (0x3f800000u + uint32_t(k) * 0x10000u) | 0x8000u;
            float f;
            std::memcpy(&f, &b, 4);
            return f;
        });
    }
    return in;
}

class GgmlQuantize : public ::testing::TestWithParam<int32_t> {};

TEST_P(GgmlQuantize, EveryQuantizerRoundsAsGgml) {
    MEMRA_TRUTH_REQUIRE_GGML_AVX2();
    const int32_t act = GetParam();
    const size_t bytes = memra_act_row_bytes(act, kRow);
    int checked = 0;
    for (const Input &in : inputs(act)) {
        // ggml leaves some bytes unwritten (Q8_K: the bsums of an all-zero block, which its dots
        // multiply by a zero scale): they are the ones that differ between two runs over buffers
        // filled differently, and are not compared. memra writes zeros there.
        std::vector<uint8_t> want(bytes, 0xa5), again(bytes, 0x5a);
        ggml_peer()->from_float(ggml_type_of(act), in.x.data(), want.data(), kRow);
        ggml_peer()->from_float(ggml_type_of(act), in.x.data(), again.data(), kRow);
        std::vector<bool> written(bytes);
        for (size_t i = 0; i < bytes; ++i) written[i] = want[i] == again[i];
        for (const Plugin &p : runnable_plugins()) {
            if (!p.table->quantize[act]) continue;  // the core then uses another plugin's
            ++checked;
            std::vector<uint8_t> got(bytes, 0x5a);
            p.table->quantize[act](in.x.data(), kRow, got.data());
            size_t at = 0;
            while (at < bytes && (!written[at] || got[at] == want[at])) ++at;
            if (at == bytes) continue;
            const size_t block = size_t(memra_act_block_bytes(act));
            ADD_FAILURE() << p.label << " " << memra_act_format_name(act) << ", input " << in.name
                          << ": first differing byte " << at << " (block " << at / block << ", byte "
                          << at % block << "): memra 0x" << std::hex << int(got[at]) << ", ggml 0x" << int(want[at]);
        }
    }
    EXPECT_GT(checked, 0) << "no plugin has a quantizer for " << memra_act_format_name(act);
}

INSTANTIATE_TEST_SUITE_P(Activations, GgmlQuantize, ::testing::Values(MEMRA_ACT_BF16, MEMRA_ACT_Q8_0, MEMRA_ACT_Q8_K),
                         [](const ::testing::TestParamInfo<int32_t> &i) {
                             return std::string(memra_act_format_name(i.param));
                         });

}  // namespace
}  // namespace memra::truth
