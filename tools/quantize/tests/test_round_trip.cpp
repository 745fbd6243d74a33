// Each encoder against the scalar backend's decoder (an independent implementation of the
// formats spec): encode random rows, decode, and bound the relative rms error.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "memra/cpu_experts.h"
#include "memra/qtypes.h"
#include "quantize.h"
#include "scalar/scalar_backend.h"

namespace memra::quantize {
namespace {

const memra_kernel_v2 &decoder(int32_t qtype) {
    const memra_backend_v2 *b = memra_scalar_backend();
    for (int k = 0; k < b->kernel_count; ++k)
        if (b->kernels[k].qtype == qtype) return b->kernels[k];
    throw std::logic_error("the scalar backend has no kernel for " + std::to_string(qtype));
}

std::vector<float> decode(int32_t qtype, const std::vector<uint8_t> &bytes, int64_t rows, int64_t n) {
    std::vector<float> y(size_t(rows * n));
    const size_t rb = row_bytes(qtype, n);
    for (int64_t r = 0; r < rows; ++r) decoder(qtype).dequantize_row(bytes.data() + r * rb, int32_t(n), y.data() + r * n);
    return y;
}

double relative_rms_error(const std::vector<float> &x, const std::vector<float> &y) {
    double e = 0, s = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        e += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
        s += double(x[i]) * x[i];
    }
    return std::sqrt(e / s);
}

// The relative rms error each format may have on N(0, sigma^2) rows. A uniform quantizer of step
// D has rms error D / sqrt(12); D follows from the format's levels and the block maximum, and for
// Gaussian values the expected maximum magnitude of a block is about 2.0 sigma (16 values),
// 2.4 sigma (32) and 2.9 sigma (256). Each bound is that estimate with ~30% margin (block maxima
// vary, and fp16 / 6-bit scale rounding adds a little); the scale searches only make it smaller.
struct Bound {
    int32_t qtype;
    double max_error;
    const char *why;
};
const Bound kBounds[] = {
    {MEMRA_QTYPE_F32, 0.0, "exact"},
    {MEMRA_QTYPE_BF16, 0.0025, "8 significant bits: rounding error <= 2^-9 relative, rms 2^-9/sqrt(3) = 0.0011"},
    {MEMRA_QTYPE_Q8_0, 0.008, "step amax/127 over 32: 2.4/127/sqrt(12) = 0.0055"},
    {MEMRA_QTYPE_Q4_0, 0.12, "step amax/8 over 32: 2.4/8/sqrt(12) = 0.087"},
    {MEMRA_QTYPE_Q2_K, 0.45, "4 levels over a 16-value range ~4.0: 4.0/3/sqrt(12) = 0.38 (min fit shrinks it)"},
    {MEMRA_QTYPE_Q3_K, 0.20, "step amax/4 over 16: 2.0/4/sqrt(12) = 0.14"},
    {MEMRA_QTYPE_Q4_K, 0.11, "16 levels over a 32-value range ~4.8: 4.8/15/sqrt(12) = 0.092"},
    {MEMRA_QTYPE_Q5_K, 0.055, "32 levels over ~4.8: 4.8/31/sqrt(12) = 0.045"},
    {MEMRA_QTYPE_Q6_K, 0.025, "step amax/32 over 16: 2.0/32/sqrt(12) = 0.018"},
    {MEMRA_QTYPE_IQ3_S, 0.25, "8 odd magnitudes (step 2 s, s = amax/15) over 32: 2 (2.4/15)/sqrt(12) = 0.092, plus the"
                              " grid's restriction to 512 of 4096 magnitude quadruples (~2x)"},
    {MEMRA_QTYPE_IQ4_XS, 0.11, "16 non-uniform levels over 32: as Q4_0's 0.087, denser near 0"},
    {MEMRA_QTYPE_MXFP4, 0.15, "E2M1 levels 0..6 times 2^floor(log2 amax) / 4 (ggml's reference quantizer: a power of"
                              " two, clipping above 1.5 * 2^floor(log2 amax)) over 32: top step amax/4..amax/2,"
                              " simulated rms 0.115 at sigma 1 and 0.02"},
    {MEMRA_QTYPE_NVFP4, 0.13, "E2M1 levels 0..6 (steps 0.5..2, amax/6 scale) over 16: rms ~0.09;"
                              " at sigma 0.02 the scale bytes are UE4M3 subnormals (steps of 2^-10): ~0.10"},
};

// gtest prints a parameter in failure messages and ctest names: the format's name, not its bytes.
void PrintTo(const Bound &b, std::ostream *out) { *out << memra_qtype_find(b.qtype)->name; }

class EncoderRoundTrip : public testing::TestWithParam<Bound> {};

TEST_P(EncoderRoundTrip, DecodedRowsAreWithinTheFormatsBound) {
    const Bound b = GetParam();
    constexpr int64_t kRows = 16, kN = 1024;
    for (float sigma : {1.0f, 0.02f}) {  // 0.02: a real FFN weight's scale (fp16 subnormal scales)
        std::mt19937_64 rng(uint64_t(b.qtype) * 1000 + uint64_t(sigma * 100));
        std::normal_distribution<float> normal(0.0f, sigma);
        std::vector<float> x(size_t(kRows * kN));
        for (float &v : x) v = normal(rng);
        const std::vector<uint8_t> bytes = quantize_rows(b.qtype, x.data(), kRows, kN);
        ASSERT_EQ(bytes.size(), size_t(kRows) * row_bytes(b.qtype, kN));
        const double err = relative_rms_error(x, decode(b.qtype, bytes, kRows, kN));
        EXPECT_LE(err, b.max_error) << memra_qtype_find(b.qtype)->name << " sigma " << sigma << ": " << b.why;
        RecordProperty(std::string("rel_rms_error_sigma_") + (sigma == 1.0f ? "1" : "0.02"), std::to_string(err));
        std::printf("%-7s sigma %-5g rel rms error %.5f (bound %.4f)\n", memra_qtype_find(b.qtype)->name, sigma, err, b.max_error);
    }
}

// A zero row decodes to zeros (+-0) in every format: no NaN from a zero scale.
TEST_P(EncoderRoundTrip, ZeroRowDecodesToZero) {
    const int32_t qtype = GetParam().qtype;
    const std::vector<float> x(512, 0.0f);
    for (float v : decode(qtype, quantize_rows(qtype, x.data(), 1, 512), 1, 512)) EXPECT_EQ(v, 0.0f);
}

// A row of one repeated value (nothing to fit a spread to) round-trips within the format's
// bound; a row of zeros with one spike keeps the spike as its largest value. (The spike row is not
// held to the Gaussian bound: IQ3_S has no zero level, so the 31 zeros sharing the spike's
// sub-block cost it ~0.35 whatever the encoder does.)
TEST_P(EncoderRoundTrip, DegenerateRowsStayFinite) {
    const Bound b = GetParam();
    const std::vector<float> constant(512, -0.75f);
    const std::vector<float> y = decode(b.qtype, quantize_rows(b.qtype, constant.data(), 1, 512), 1, 512);
    for (float v : y) ASSERT_TRUE(std::isfinite(v));
    EXPECT_LE(relative_rms_error(constant, y), std::max(b.max_error, 0.01)) << "constant row";

    std::vector<float> spike(512, 0.0f);
    spike[100] = 3.0f;
    const std::vector<float> z = decode(b.qtype, quantize_rows(b.qtype, spike.data(), 1, 512), 1, 512);
    size_t top = 0;
    for (size_t i = 0; i < z.size(); ++i) {
        ASSERT_TRUE(std::isfinite(z[i]));
        if (std::fabs(z[i]) > std::fabs(z[top])) top = i;
    }
    EXPECT_EQ(top, 100u);
    EXPECT_NEAR(z[100], 3.0f, 3.0f * 2 * b.max_error) << "spike";
}

std::string bound_name(const testing::TestParamInfo<Bound> &info) { return memra_qtype_find(info.param.qtype)->name; }

INSTANTIATE_TEST_SUITE_P(AllFormats, EncoderRoundTrip, testing::ValuesIn(kBounds), bound_name);

TEST(Quantize, EveryLibraryFormatHasAnEncoder) {
    ASSERT_EQ(std::size(kBounds), size_t(MEMRA_QTYPE_COUNT));
    for (const memra_qtype_info &q : memra_qtype_table) EXPECT_TRUE(has_encoder(q.id)) << q.name;
    EXPECT_FALSE(has_encoder(1));  // F16: not in the list
}

TEST(Quantize, RejectsUnknownTypesAndPartialBlocks) {
    const std::vector<float> x(300, 1.0f);
    EXPECT_THROW(quantize_rows(1, x.data(), 1, 256), std::invalid_argument);
    EXPECT_THROW(quantize_rows(MEMRA_QTYPE_Q4_K, x.data(), 1, 300), std::invalid_argument);
    EXPECT_THROW(quantize_rows(MEMRA_QTYPE_Q8_0, x.data(), 1, 0), std::invalid_argument);
}

}  // namespace
}  // namespace memra::quantize
