// Scalar conversions of plugins/common/fp_convert.h: fp16 (both ways, exhaustively against the
// compiler's own _Float16 conversions and ggml's f16 example), bf16 edge cases, UE4M3 (all 256
// against ggml's table), and the two rounding helpers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "common/block_fields.h"
#include "common/fp_convert.h"
#include "reference_data.h"
#include "simd/scale_byte_tables.h"
#include "test_util.h"

namespace memra::plugin_tests {
namespace {

TEST(Fp16, DecodeAll65536MatchesCompilerWidening) {
    for (uint32_t h = 0; h < 65536; ++h) {
        _Float16 f;
        const uint16_t hb = uint16_t(h);
        std::memcpy(&f, &hb, 2);
        const float want = float(f);
        const float got = fp16_to_f32(hb);
        if (std::isnan(want)) {
            ASSERT_TRUE(std::isnan(got)) << std::hex << h;
        } else {
            ASSERT_EQ(bits(got), bits(want)) << std::hex << "fp16 0x" << h;
        }
    }
}

TEST(Fp16, DecodeKnownValues) {
    EXPECT_EQ(fp16_to_f32(0x0001), std::ldexp(1.0f, -24));   // smallest subnormal
    EXPECT_EQ(fp16_to_f32(0x03FF), std::ldexp(1023.0f, -24));  // largest subnormal
    EXPECT_EQ(fp16_to_f32(0x0400), std::ldexp(1.0f, -14));   // smallest normal
    EXPECT_EQ(fp16_to_f32(0x7BFF), 65504.0f);
    EXPECT_EQ(bits(fp16_to_f32(0x8000)), 0x80000000u);
    EXPECT_EQ(fp16_to_f32(0x7C00), std::numeric_limits<float>::infinity());
    EXPECT_TRUE(std::isnan(fp16_to_f32(0x7E00)));
}

TEST(Fp16, DecodeMatchesGgmlF16Example) {
    for (const auto &ex : testkit::load_examples("f16")) {
        ASSERT_EQ(ex.bytes.size(), 2 * ex.values.size()) << ex.name;
        for (size_t i = 0; i < ex.values.size(); ++i) {
            const uint16_t h = uint16_t(ex.bytes[2 * i] | ex.bytes[2 * i + 1] << 8);
            EXPECT_EQ(bits(fp16_to_f32(h)), bits(ex.values[i])) << ex.name << " element " << i;
        }
    }
}

uint16_t compiler_fp16(float x) {
    const _Float16 h = _Float16(x);  // libgcc's IEEE conversion: RNE, subnormals, overflow to inf
    uint16_t b;
    std::memcpy(&b, &h, 2);
    return b;
}

TEST(Fp16, EncodeMatchesCompilerConversion) {
    // Every f32 whose top 19 bits select a neighbourhood of each fp16 value and of the midpoints
    // between them: all exponents, low mantissa patterns around the rounding bit.
    for (uint32_t hi = 0; hi < (1u << 19); ++hi) {
        for (uint32_t low : {0x0000u, 0x0001u, 0x0FFFu, 0x1000u, 0x1001u, 0x1FFFu}) {
            const uint32_t u = (hi << 13) | low;
            const float x = from_bits(u);
            if (std::isnan(x)) continue;
            ASSERT_EQ(f32_to_fp16(x), compiler_fp16(x)) << std::hex << "f32 0x" << u;
        }
    }
    std::mt19937 rng(7);
    for (int i = 0; i < 1000000; ++i) {
        const float x = from_bits(rng());
        if (std::isnan(x)) continue;
        ASSERT_EQ(f32_to_fp16(x), compiler_fp16(x)) << std::hex << "f32 0x" << bits(x);
    }
}

TEST(Fp16, EncodeEdgeCases) {
    EXPECT_EQ(f32_to_fp16(65504.0f), 0x7BFF);
    EXPECT_EQ(f32_to_fp16(65519.996f), 0x7BFF);
    EXPECT_EQ(f32_to_fp16(65520.0f), 0x7C00);  // tie with odd 0x7BFF: rounds up to inf
    EXPECT_EQ(f32_to_fp16(-1e10f), 0xFC00);
    EXPECT_EQ(f32_to_fp16(std::ldexp(1.0f, -25)), 0x0000);         // tie to even: zero
    EXPECT_EQ(f32_to_fp16(std::ldexp(1.5f, -25)), 0x0001);
    EXPECT_EQ(f32_to_fp16(std::ldexp(3.0f, -25)), 0x0002);         // 1.5 ulp tie -> even 2
    EXPECT_EQ(f32_to_fp16(-0.0f), 0x8000);
    EXPECT_EQ(f32_to_fp16(std::numeric_limits<float>::quiet_NaN()), 0x7E00);
    EXPECT_EQ(f32_to_fp16(-std::numeric_limits<float>::quiet_NaN()), 0xFE00);
}

TEST(Bf16, EncodeRoundsToNearestEven) {
    EXPECT_EQ(f32_to_bf16(from_bits(0x3F808000)), 0x3F80);  // tie, even stays
    EXPECT_EQ(f32_to_bf16(from_bits(0x3F818000)), 0x3F82);  // tie, odd rounds up
    EXPECT_EQ(f32_to_bf16(from_bits(0x3F808001)), 0x3F81);  // above the tie
    EXPECT_EQ(f32_to_bf16(from_bits(0x3F807FFF)), 0x3F80);  // below the tie
    EXPECT_EQ(f32_to_bf16(from_bits(0xBF818000)), 0xBF82);  // sign does not matter
}

TEST(Bf16, EncodeSpecialValues) {
    EXPECT_EQ(f32_to_bf16(from_bits(0x7F800000)), 0x7F80);  // +inf
    EXPECT_EQ(f32_to_bf16(from_bits(0xFF800000)), 0xFF80);  // -inf
    EXPECT_EQ(f32_to_bf16(from_bits(0x7F7FFFFF)), 0x7F80);  // FLT_MAX overflows to inf
    EXPECT_EQ(f32_to_bf16(from_bits(0x7F800001)), 0x7FC0);  // signalling NaN forced quiet
    EXPECT_EQ(f32_to_bf16(from_bits(0xFF800001)), 0xFFC0);
    EXPECT_EQ(f32_to_bf16(from_bits(0x7FC00000)), 0x7FC0);
    EXPECT_EQ(f32_to_bf16(from_bits(0x7FFFFFFF)), 0x7FFF);  // (bits >> 16) | 0x40, no rounding
    EXPECT_EQ(f32_to_bf16(from_bits(0x00018000)), 0x0002);  // subnormal, tie to even, no flush
    EXPECT_EQ(f32_to_bf16(from_bits(0x00008000)), 0x0000);
    EXPECT_EQ(f32_to_bf16(from_bits(0x00008001)), 0x0001);
    EXPECT_EQ(f32_to_bf16(from_bits(0x80000000)), 0x8000);
}

TEST(Bf16, DecodeIsUpperHalf) {
    for (uint32_t b = 0; b < 65536; ++b) ASSERT_EQ(bits(bf16_to_f32(uint16_t(b))), b << 16);
}

// A scale byte's decode against ggml's for all 256 bytes (tables/<table>.txt: byte, f32 bits).
void expect_all_256_as_table(const char *table, float (*decode)(uint8_t)) {
    const auto rows = testkit::load_table(table);
    ASSERT_EQ(rows.size(), 256u);
    for (size_t i = 0; i < 256; ++i) {
        ASSERT_EQ(std::stoul(rows[i][0], nullptr, 16), i);
        const uint32_t want = uint32_t(std::stoul(rows[i][1], nullptr, 16));
        EXPECT_EQ(bits(decode(uint8_t(i))), want) << table << " byte " << i;
    }
}

TEST(Ue4m3, All256MatchGgmlTable) {
    expect_all_256_as_table("ue4m3_nvfp4_scale", ue4m3_half);
    EXPECT_EQ(ue4m3_half(0x80), 0.0f);
    EXPECT_EQ(ue4m3_half(0xFF), 240.0f);
    EXPECT_EQ(ue4m3_half(0x7E), 224.0f);
    EXPECT_EQ(ue4m3_half(0x01), std::ldexp(1.0f, -10));
}

// The SIMD builds decode NVFP4 scale bytes by table (simd/scale_byte_tables.h, constexpr and free of
// intrinsics); it must equal ue4m3_half for all 256 (the synthetic weights only use exponents 1
// and 2, so the plugin-vs-scalar checks alone would not see a wrong entry elsewhere).
TEST(Ue4m3, SimdTableEqualsTheConversionForEveryByte) {
    for (int x = 0; x < 256; ++x)
        ASSERT_EQ(bits(memra::simd::kUe4m3Half.v[x]), bits(ue4m3_half(uint8_t(x)))) << "byte " << x;
}

// MXFP4's scale byte (spec §2.6): ggml's decode of all 256, including the subnormal results of
// 0x00 and 0x01 and 0xFF = 2^127 (no NaN).
TEST(E8m0, All256MatchGgmlTable) {
    expect_all_256_as_table("e8m0_mxfp4_scale", blocks::mxfp4::e8m0_half);
    EXPECT_EQ(bits(blocks::mxfp4::e8m0_half(0x00)), 0x00200000u);
    EXPECT_EQ(blocks::mxfp4::e8m0_half(0x80), 1.0f);
    EXPECT_EQ(blocks::mxfp4::e8m0_half(0xFF), std::ldexp(1.0f, 127));
}

// The SIMD builds decode MXFP4 scale bytes by table too (simd/scale_byte_tables.h).
TEST(E8m0, SimdTableEqualsTheConversionForEveryByte) {
    for (int e = 0; e < 256; ++e)
        ASSERT_EQ(bits(memra::simd::kE8m0Half.v[e]), bits(blocks::mxfp4::e8m0_half(uint8_t(e)))) << "byte " << e;
}

TEST(Rounding, NearestIntTiesToEven) {
    EXPECT_EQ(nearest_int(0.5f), 0);
    EXPECT_EQ(nearest_int(1.5f), 2);
    EXPECT_EQ(nearest_int(2.5f), 2);
    EXPECT_EQ(nearest_int(-0.5f), 0);
    EXPECT_EQ(nearest_int(-1.5f), -2);
    EXPECT_EQ(nearest_int(-126.5f), -126);
    EXPECT_EQ(nearest_int(127.49f), 127);
    EXPECT_EQ(nearest_int(4194303.0f), 4194303);
    EXPECT_EQ(nearest_int(-4194303.0f), -4194303);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> dist(-300.0f, 300.0f);
    for (int i = 0; i < 100000; ++i) {
        const float x = dist(rng);
        ASSERT_EQ(nearest_int(x), int32_t(std::nearbyint(x))) << x;
    }
}

TEST(Rounding, RoundToI32HasCvtps2dqSemantics) {
    EXPECT_EQ(round_to_i32_rne(2.5f), 2);
    EXPECT_EQ(round_to_i32_rne(3.5f), 4);
    EXPECT_EQ(round_to_i32_rne(-2.5f), -2);
    EXPECT_EQ(round_to_i32_rne(-0.0f), 0);
    EXPECT_EQ(round_to_i32_rne(8388609.0f), 8388609);
    EXPECT_EQ(round_to_i32_rne(-2147483648.0f), INT32_MIN);
    EXPECT_EQ(round_to_i32_rne(2147483648.0f), INT32_MIN);
    EXPECT_EQ(round_to_i32_rne(std::numeric_limits<float>::infinity()), INT32_MIN);
    EXPECT_EQ(round_to_i32_rne(std::numeric_limits<float>::quiet_NaN()), INT32_MIN);
    std::mt19937 rng(5);
    for (int i = 0; i < 200000; ++i) {
        const float x = from_bits(rng());
        if (std::isnan(x) || !(std::fabs(x) < 2147483648.0f)) continue;
        ASSERT_EQ(round_to_i32_rne(x), int32_t(std::nearbyint(x))) << x;
    }
}

}  // namespace
}  // namespace memra::plugin_tests
