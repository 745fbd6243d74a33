// Every SIMD build of plugins/simd against the scalar reference, bit for bit: gemv and gemm
// (memcmp of the results) and dequantize_row, for each format the build has a kernel for, over
// the shapes in_features in {smallest legal, 2048, 4096, 16640 (out <= 33)}, out_features in {1, 7, 33, 1536, 768},
// gemm m in {1, 2, 5, 64} (64 only for the small out_features), with padded xq_stride and ldy.
//
// Builds: the plugin modules avx2, avxvnni, avx512, ... (dlopened like the core does, and only
// when the running CPU has every feature the module's manifest requires: otherwise the test is
// skipped and says why) and the test-only static libraries (simd_builds.h). Only a CPU feature
// the build needs and this CPU lacks makes a skip: a plugin that is present but does not load,
// or lacks a format's kernel, fails. A rows-only build (plugins/amx: gemm of some formats, no
// token path) is checked here on what it serves; test_tiles_vs_scalar.cpp checks it in depth.
#include <gtest/gtest.h>
#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "formats.h"
#include "common/fp_convert.h"
#include "common/quantize.h"
#include "isa_scan.h"
#include "memra/cpu_experts.h"
#include "simd/ue4m3_table.h"
#include "synthetic_weights.h"
#include "simd_builds.h"
#include "test_util.h"

namespace memra::plugin_tests {
namespace {

const std::string kBackendDir = MEMRA_SIMD_BACKEND_DIR;
const std::vector<const char *> kPlugins = simd_rows(false);
const std::vector<const char *> kBuilds = simd_rows(true);

// One problem and the scalar answers, shared by all builds (the scalar side is the slow part).
struct Case {
    int32_t qtype = 0, in = 0, out = 0, acts = 0;
    size_t row_bytes = 0, act_bytes = 0, stride = 0;
    std::vector<uint8_t> w, xq;     // xq: `acts` activations, `stride` apart (padding 0xCD)
    std::vector<float> ref;         // ref[j * out + r] = scalar gemv of row r with activation j
    std::vector<float> deq_first, deq_last;
};

// Activations 1-3 are edge cases: all zeros (Q8_0 / Q8_K scale 0, bsums 0), a few huge outliers
// (every other quant of their blocks rounds to 0 or +-1) and the extreme quants +-127 everywhere.
void edge_pattern(int32_t j, std::vector<float> &x, std::mt19937_64 &rng) {
    if (j == 1) std::fill(x.begin(), x.end(), 0.0f);
    if (j == 2)
        for (size_t k = 0; k < x.size(); k += 1 + rng() % 97) x[k] *= 1000.0f;
    if (j == 3)
        for (size_t k = 0; k < x.size(); ++k) x[k] = (k * 7 + rng() % 3) % 2 ? 4.0f : -4.0f;
}

const Case &reference(int32_t qtype, int32_t in, int32_t out, int32_t acts) {
    static std::map<std::tuple<int32_t, int32_t, int32_t>, std::unique_ptr<Case>> cache;
    std::unique_ptr<Case> &slot = cache[{qtype, in, out}];
    if (slot) return *slot;
    slot = std::make_unique<Case>();
    Case &c = *slot;
    const memra_qtype_info &info = testkit::qtype_info(qtype);
    std::mt19937_64 rng(uint64_t(qtype) * 1000003u + uint64_t(in) * 131u + uint64_t(out));
    c.qtype = qtype, c.in = in, c.out = out, c.acts = acts;
    c.row_bytes = testkit::row_bytes(qtype, in);
    c.w = testkit::random_weights(qtype, out, in, rng);
    c.act_bytes = memra_act_row_bytes(info.act_format, in);
    c.stride = c.act_bytes + 40;
    c.xq.assign(c.stride * size_t(acts), 0xCD);
    const memra_kernel_v2 &sk = testkit::scalar_kernel(qtype);
    c.ref.resize(size_t(out) * size_t(acts));
    for (int32_t j = 0; j < acts; ++j) {
        std::vector<float> x = testkit::random_input(in, rng);
        edge_pattern(j, x, rng);
        const std::vector<uint8_t> q = testkit::quantize_activation(info.act_format, x.data(), in);
        std::memcpy(&c.xq[size_t(j) * c.stride], q.data(), c.act_bytes);
        sk.gemv(c.w.data(), c.row_bytes, out, in, &c.xq[size_t(j) * c.stride], &c.ref[size_t(j) * out]);
    }
    c.deq_first.resize(size_t(in));
    c.deq_last.resize(size_t(in));
    sk.dequantize_row(c.w.data(), in, c.deq_first.data());
    sk.dequantize_row(c.w.data() + size_t(out - 1) * c.row_bytes, in, c.deq_last.data());
    return c;
}


using Param = std::tuple<const char *, const char *>;  // build, qtype name
class SimdVsScalar : public ::testing::TestWithParam<Param> {};

TEST_P(SimdVsScalar, BitExact) {
    const std::string build = std::get<0>(GetParam());
    const memra_qtype_info &info = qtype_by_name(std::get<1>(GetParam()));
    std::string why;
    bool cpu_lacks = false;
    const memra_backend_v2 *t = build_table(build, &why, &cpu_lacks);
    if (!t && cpu_lacks) GTEST_SKIP() << why;
    ASSERT_NE(t, nullptr) << "broken plugin: " << why;
    ASSERT_EQ(std::string(t->name), build);
    // Every SIMD build with a token path serves every format on both paths
    // (plugins/simd/backend_table.cpp): a missing kernel is a defect, not a skip. A rows-only
    // build serves the formats of its list (test_tiles_vs_scalar.cpp checks which).
    const bool full = serves_token_path(t);
    const memra_kernel_v2 *k = find_kernel(t, info.id);
    if (!full && !k) return;
    ASSERT_NE(k, nullptr) << build << " has no kernel for " << info.name;
    ASSERT_EQ(k->act_format, info.act_format);
    if (full) {
        ASSERT_TRUE(k->gemv && k->gemm) << build << " lacks a path of " << info.name;
    }

    std::vector<int32_t> ins = {info.block_elems, 2048, 4096};
    if (info.block_elems == 1) ins.push_back(37);  // F32 / BF16: a tail of 5 after 32
    // Rows longer than the token path's activation window (simd/common.h kActWindowBytes: 5440
    // values for Q8_0 activations, 11776 or more for Q8_K ones), with a partial last window,
    // done in row groups of 16 (33 rows: two whole groups and one row).
    constexpr int32_t kLongRow = 16640;
    ins.push_back(kLongRow);
    for (int32_t in : ins)
        for (int32_t out : {1, 7, 33, 1536, 768}) {
            if (in == kLongRow && out > 33) continue;  // the long rows' cases stay small
            const bool small = out <= 33;
            const Case &c = reference(info.id, in, out, small ? 64 : 5);
            SCOPED_TRACE(build + " " + info.name + " in=" + std::to_string(in) + " out=" + std::to_string(out));
            std::vector<float> y(static_cast<size_t>(out));
            for (int32_t j = 0; j < 4 && k->gemv; ++j) {  // the random activation and the three edge cases
                const float *want = &c.ref[size_t(j) * out];
                k->gemv(c.w.data(), c.row_bytes, out, in, &c.xq[size_t(j) * c.stride], y.data());
                ASSERT_EQ(std::memcmp(y.data(), want, y.size() * 4), 0)
                    << "gemv, activation " << j << ": " << first_difference(y.data(), want, y.size());
            }
            for (int32_t m : small ? std::vector<int32_t>{1, 2, 5, 64} : std::vector<int32_t>{2, 5}) {
                if (!k->gemm) break;
                const size_t ldy = size_t(out) + 3;
                std::vector<float> ym(ldy * size_t(m), -7.0f);
                k->gemm(c.w.data(), c.row_bytes, out, in, c.xq.data(), c.stride, m, ym.data(), ldy);
                for (int32_t j = 0; j < m; ++j) {
                    const float *got = &ym[size_t(j) * ldy];
                    ASSERT_EQ(std::memcmp(got, &c.ref[size_t(j) * out], size_t(out) * 4), 0)
                        << "gemm m=" << m << " activation " << j << ": "
                        << first_difference(got, &c.ref[size_t(j) * out], size_t(out));
                    for (size_t r = size_t(out); r < ldy; ++r)
                        ASSERT_EQ(got[r], -7.0f) << "gemm m=" << m << " wrote outside its rows";
                }
            }
            std::vector<float> d(static_cast<size_t>(in));
            k->dequantize_row(c.w.data(), in, d.data());
            ASSERT_EQ(std::memcmp(d.data(), c.deq_first.data(), d.size() * 4), 0) << "dequantize_row";
            k->dequantize_row(c.w.data() + size_t(out - 1) * c.row_bytes, in, d.data());
            ASSERT_EQ(std::memcmp(d.data(), c.deq_last.data(), d.size() * 4), 0) << "dequantize_row";
        }
}

INSTANTIATE_TEST_SUITE_P(Builds, SimdVsScalar,
                         ::testing::Combine(::testing::ValuesIn(kBuilds), ::testing::ValuesIn(kAllNames)),
                         [](const auto &i) {
                             return std::string(std::get<0>(i.param)) + "_" + std::get<1>(i.param);
                         });

// BF16 where the pair order's DAZ/FTZ decide bits (plugins/scalar/dot_float.cpp): weights and
// activations around 2^-60..2^-75, whose products and partial sums fall below FLT_MIN, with some
// subnormal and zero elements, and rows with a tail after the last whole 64. Every build (by
// vdpbf16ps or by vfmadds under MXCSR DAZ/FTZ) must equal the scalar reference, and must leave
// the caller's MXCSR as it found it.
class SimdBf16 : public ::testing::TestWithParam<const char *> {};

std::vector<uint16_t> tiny_bf16(size_t count, std::mt19937 &rng) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<uint16_t> v(count);
    for (auto &h : v) {
        h = f32_to_bf16(std::ldexp(normal(rng), -60 - int(rng() % 16)));
        if (rng() % 9 == 0) h = uint16_t((rng() & 0x807F) | (rng() % 2));  // subnormal or zero
    }
    return v;
}

TEST_P(SimdBf16, FlushesAndRoundsAsVdpbf16ps) {
    std::string why;
    bool cpu_lacks = false;
    const memra_backend_v2 *t = build_table(GetParam(), &why, &cpu_lacks);
    if (!t && cpu_lacks) GTEST_SKIP() << why;
    ASSERT_NE(t, nullptr) << "broken plugin: " << why;
    const memra_kernel_v2 *k = find_kernel(t, MEMRA_QTYPE_BF16);
    if (!serves_token_path(t) && !k) return;  // a rows-only build without BF16 (plugins/amx)
    ASSERT_NE(k, nullptr);
    const memra_kernel_v2 &sk = testkit::scalar_kernel(MEMRA_QTYPE_BF16);
    std::mt19937 rng(29);
    for (int32_t n : {64, 1000, 4096}) {
        constexpr int32_t kOut = 9, kActs = 5;
        const size_t row_bytes = 2 * size_t(n);
        const std::vector<uint16_t> w = tiny_bf16(size_t(kOut) * size_t(n), rng);
        const std::vector<uint16_t> x = tiny_bf16(size_t(kActs) * size_t(n), rng);
        const auto *wb = reinterpret_cast<const uint8_t *>(w.data());
        std::vector<float> want(size_t(kOut) * kActs), got(want.size(), -7.0f), gemv(static_cast<size_t>(kOut));
        for (int32_t j = 0; j < kActs; ++j) sk.gemv(wb, row_bytes, kOut, n, &x[size_t(j) * size_t(n)], &want[size_t(j) * kOut]);
        const unsigned mxcsr = _mm_getcsr();
        k->gemm(wb, row_bytes, kOut, n, x.data(), row_bytes, kActs, got.data(), kOut);
        EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * 4), 0)
            << "gemm, n = " << n << ": " << first_difference(got.data(), want.data(), want.size());
        for (int32_t j = 0; j < kActs; ++j) {
            k->gemv(wb, row_bytes, kOut, n, &x[size_t(j) * size_t(n)], gemv.data());
            EXPECT_EQ(std::memcmp(gemv.data(), &want[size_t(j) * kOut], gemv.size() * 4), 0)
                << "gemv, n = " << n << ", activation " << j << ": "
                << first_difference(gemv.data(), &want[size_t(j) * kOut], gemv.size());
        }
        EXPECT_EQ(_mm_getcsr(), mxcsr) << "MXCSR changed by the kernels";
    }
}

INSTANTIATE_TEST_SUITE_P(Builds, SimdBf16, ::testing::ValuesIn(kBuilds),
                         [](const auto &i) { return std::string(i.param); });

// Each build's activation quantizers write the canonical quantizers' bytes (plugins/common),
// which the scalar reference and every dot test use: rows of blocks that are ordinary, tiny, huge,
// exactly on rounding ties, all zero, subnormal, with NaN or infinity, and with the largest
// magnitude reached first by a negative and later by a positive value (Q8_K keeps the first).
std::vector<float> quantizer_inputs(int32_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(n));
    const int32_t blocks = n / 32;
    for (int32_t b = 0; b < blocks; ++b) {
        float *xb = x.data() + size_t(b) * 32;
        const int kind = b % 10;
        const float scale = kind == 1 ? 1e-30f : kind == 2 ? 1e30f : kind == 3 ? 1e-41f : 1.0f;
        for (int i = 0; i < 32; ++i) xb[i] = scale * normal(rng);
        if (kind == 4)  // amax 127: x * 127/amax = x, so halves are exact ties
            for (int i = 0; i < 32; ++i) xb[i] = i == 0 ? 127.0f : float(i % 64) - 15.5f;
        if (kind == 5) std::fill(xb, xb + 32, 0.0f);
        if (kind == 6) {  // and BF16's rounding cases: ties to even both ways, overflow, a signalling NaN
            const uint32_t patterns[] = {0x3F808000u, 0x3F818000u, 0x7F7FFFFFu, 0xFF7FFFFFu,
                                         0x7F800001u, 0x80000000u, 0x00008000u, 0x00018000u};
            for (int i = 0; i < 8; ++i) std::memcpy(&xb[i], &patterns[i], 4);
            xb[8 + rng() % 24] = std::numeric_limits<float>::quiet_NaN();
        }
        if (kind == 7) xb[rng() % 32] = -std::numeric_limits<float>::infinity();
        if (kind == 8) {
            xb[3] = -9.0f;
            xb[20] = 9.0f;
        }
        if (kind == 9) xb[31] = 1e-45f * float(rng() % 3);  // a lone subnormal (or zero) maximum
        if (kind == 9)
            for (int i = 0; i < 31; ++i) xb[i] = 0.0f;
    }
    return x;
}

class SimdQuantizers : public ::testing::TestWithParam<const char *> {};

TEST_P(SimdQuantizers, WriteTheCanonicalBytes) {
    std::string why;
    bool cpu_lacks = false;
    const memra_backend_v2 *t = build_table(GetParam(), &why, &cpu_lacks);
    if (!t && cpu_lacks) GTEST_SKIP() << why;
    ASSERT_NE(t, nullptr) << "broken plugin: " << why;
    using Quantize = void (*)(const float *, int32_t, void *);
    const struct {
        int act;
        Quantize canonical;
    } kFormats[] = {{MEMRA_ACT_F32, quantize_row_f32}, {MEMRA_ACT_BF16, quantize_row_bf16},
                    {MEMRA_ACT_Q8_0, quantize_row_q8_0}, {MEMRA_ACT_Q8_K, quantize_row_q8_K}};
    for (const auto &f : kFormats)
        for (int32_t n : {256, 4096, 2560 * 4})
            for (uint32_t seed : {1u, 2u, 3u}) {
                const std::vector<float> x = quantizer_inputs(n, seed);
                const size_t bytes = memra_act_row_bytes(f.act, n);
                std::vector<uint8_t> want(bytes, 0xA5), got(bytes + 64, 0x5A);
                f.canonical(x.data(), n, want.data());
                t->quantize[f.act](x.data(), n, got.data());
                for (size_t i = 0; i < bytes; ++i)
                    ASSERT_EQ(got[i], want[i]) << memra_act_format_name(f.act) << " n=" << n << " seed=" << seed
                                               << ": first differing byte " << i;
                for (size_t i = bytes; i < got.size(); ++i) ASSERT_EQ(got[i], 0x5A) << "wrote past the row";
            }
}

INSTANTIATE_TEST_SUITE_P(Builds, SimdQuantizers, ::testing::ValuesIn(kBuilds),
                         [](const auto &i) { return std::string(i.param); });

// The SIMD builds decode NVFP4 scale bytes by table; it must equal ue4m3_half for all 256 (the
// synthetic weights only use exponents 1 and 2).
TEST(SimdTables, Ue4m3TableEqualsTheConversionForEveryByte) {
    for (int x = 0; x < 256; ++x)
        ASSERT_EQ(bits(memra::simd::kUe4m3Half.v[x]), bits(ue4m3_half(uint8_t(x)))) << "byte " << x;
}

// Each SIMD module is loaded by a core that has only read its manifest: the entry point (run
// right after dlopen) must be baseline x86-64 code, and no translation unit may have a
// dynamic initialiser. The kernels themselves are full of VEX code, by design.
class SimdModule : public ::testing::TestWithParam<const char *> {};

TEST_P(SimdModule, EntryPointHasNoVexAndNoStaticConstructors) {
    const std::string path = kBackendDir + "/memra-backend-" + GetParam() + ".so";
    int status = 0;
    const std::string dis = run_command(
        "objdump -d --no-show-raw-insn --disassemble=memra_backend_entry_v2 '" + path + "' 2>&1", &status);
    ASSERT_EQ(status, 0) << dis;
    ASSERT_NE(dis.find("<memra_backend_entry_v2>:"), std::string::npos) << dis;
    const IsaScan s = scan_disassembly(dis);
    EXPECT_GT(s.instructions, 0) << dis;
    std::string shown;
    for (const std::string &o : s.offending) shown += o + "\n";
    EXPECT_TRUE(s.offending.empty()) << "VEX/EVEX in the entry point:\n" << shown;
    const std::string syms = run_command("nm '" + path + "' 2>&1", &status);
    ASSERT_EQ(status, 0) << syms;
    EXPECT_EQ(syms.find("_GLOBAL__sub_I"), std::string::npos) << "a translation unit has a static constructor";
}

// The core refuses a plugin whose table's required_features differ from its manifest (and then
// silently serves everything from a lower plugin), so check the two agree.
TEST_P(SimdModule, TableFeaturesEqualManifest) {
    const std::string name = GetParam();
#define MEMRA_FEATURE_NAME_(ID, name, ...) #name,
    static const char *const kNames[MEMRA_CPU_FEATURE_COUNT] = {MEMRA_CPU_FEATURE_LIST(MEMRA_FEATURE_NAME_)};
#undef MEMRA_FEATURE_NAME_
    uint64_t want = 0;
    for (const std::string &f : manifest_requires(name)) {
        int bit = -1;
        for (int i = 0; i < MEMRA_CPU_FEATURE_COUNT; ++i)
            if (f == kNames[i]) bit = i;
        ASSERT_GE(bit, 0) << "manifest of " << name << " names unknown feature " << f;
        want |= MEMRA_CPU_BIT(bit);
    }
    std::string why;
    bool cpu_lacks = false;
    const memra_backend_v2 *t = build_table(name, &why, &cpu_lacks);
    if (!t && cpu_lacks) GTEST_SKIP() << why;
    ASSERT_NE(t, nullptr) << "broken plugin: " << why;
    EXPECT_EQ(t->required_features, want) << name;
    EXPECT_EQ(std::string(t->name), name);
    EXPECT_EQ(t->interface_version, MEMRA_BACKEND_INTERFACE_VERSION);
    EXPECT_EQ(t->struct_size, sizeof(memra_backend_v2));
    for (int f = 0; f < MEMRA_ACT_FORMAT_COUNT; ++f) EXPECT_NE(t->quantize[f], nullptr) << "quantize[" << f << "]";
}

// Each module holds only the instructions its row promises: AVX-512 (zmm or opmask registers)
// only in a plugin that requires avx512f, VNNI exactly in those that require a VNNI feature, AMX
// tiles only in those that require amx_int8.
TEST_P(SimdModule, UsesOnlyItsOwnIsa) {
    const std::string name = GetParam();
    const std::vector<std::string> features = row_features(name);
    auto requires_feature = [&features](const char *f) {
        return std::find(features.begin(), features.end(), f) != features.end();
    };
    const std::string path = kBackendDir + "/memra-backend-" + name + ".so";
    int status = 0;
    const std::string dis = run_command("objdump -d --no-show-raw-insn '" + path + "' 2>&1", &status);
    ASSERT_EQ(status, 0) << dis;
    auto count = [&dis](const std::string &needle) {
        size_t n = 0;
        for (size_t at = dis.find(needle); at != std::string::npos; at = dis.find(needle, at + 1)) ++n;
        return n;
    };
    // The tile builds' integer dots are tile instructions; every other build's, vpmaddubsw (its
    // scaled dots) and nothing of AMX.
    if (requires_feature("amx_int8")) {
        EXPECT_GT(count("\ttdpbsud"), 0u) << name << ": no AMX-INT8 tile dots in the module?";
        EXPECT_GT(count("\ttilerelease"), 0u) << name << " never gives the tile state back";
    } else {
        EXPECT_GT(count("vpmaddubsw"), 0u) << name << ": no SIMD kernels in the module?";
        EXPECT_EQ(count("\ttdpb") + count("\ttileloadd") + count("\tldtilecfg"), 0u) << name << " contains AMX code";
    }
    if (!requires_feature("avx512f")) {
        EXPECT_EQ(count("%zmm"), 0u) << name << " contains AVX-512 (zmm) code";
        EXPECT_EQ(count("{%k"), 0u) << name << " contains AVX-512 (masked) code";
        EXPECT_EQ(count("{evex}"), 0u) << name << " contains EVEX-encoded code";
    } else {
        EXPECT_GT(count("%zmm"), 0u) << "the " << name << " module has no 512-bit code";
    }
    if (!requires_feature("avx_vnni") && !requires_feature("avx512_vnni"))
        EXPECT_EQ(count("vpdp"), 0u) << "the " << name << " module contains VNNI code";
    else
        EXPECT_GT(count("vpdpbusd"), 0u) << name << " has no vpdpbusd";
    if (!requires_feature("avx512_bf16"))
        EXPECT_EQ(count("vdpbf16ps"), 0u) << "the " << name << " module contains AVX512_BF16 code";
    else
        EXPECT_GT(count("vdpbf16ps"), 0u) << name << " has no vdpbf16ps";
}

INSTANTIATE_TEST_SUITE_P(Plugins, SimdModule, ::testing::ValuesIn(kPlugins),
                         [](const auto &i) { return std::string(i.param); });

}  // namespace
}  // namespace memra::plugin_tests
