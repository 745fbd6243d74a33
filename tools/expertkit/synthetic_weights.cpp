#include "synthetic_weights.h"

#include <cstring>
#include <stdexcept>

#include "common/bytes.h"
#include "common/fp_convert.h"
#include "formats.h"
#include "memra/cpu_experts.h"

namespace memra::expertkit {
namespace {

// Block scales are drawn as base * U(0.5, 1.5): blocks of one matrix differ, as in real files,
// but all stay within a factor of three. `base` is chosen per format below from the rms of its
// integer codes so that the dequantized rms lands near 0.04 (core/tests/testkit_test.cpp checks
// the result for every format).
float jitter(float base, std::mt19937_64 &rng) {
    return base * std::uniform_real_distribution<float>(0.5f, 1.5f)(rng);
}

void put_fp16(uint8_t *p, float v) { store_u16(p, f32_to_fp16(v)); }

// Writes the scale fields of one block whose other bytes are already random. The base values:
// rms of the code products (uniform codes) -> base = 0.04 / rms.
void set_block_scales(int32_t qtype, uint8_t *blk, std::mt19937_64 &rng) {
    switch (qtype) {
    case MEMRA_QTYPE_Q4_0: {
        // (q - 8), q in 0..15: rms 4.6. ggml's quantizer makes d negative about half the time.
        const float d = jitter(0.0087f, rng);
        put_fp16(blk, (rng() & 1) ? -d : d);
        break;
    }
    case MEMRA_QTYPE_Q8_0:  // int8 codes: rms 74
        put_fp16(blk, jitter(5.4e-4f, rng));
        break;
    case MEMRA_QTYPE_Q2_K:
        // d * sc * q - dmin * m with sc, m in 0..15 and q in 0..3: dmin ~ 1.5 d roughly centres
        // each sub-block (as the quantizer's min does); the total rms is ~14 d.
        put_fp16(blk + 80, jitter(3.0e-3f, rng));
        put_fp16(blk + 82, jitter(4.5e-3f, rng));
        break;
    case MEMRA_QTYPE_Q3_K:  // signed 6-bit scales (rms 18.5) x quants in -4..3 (rms 2.3)
        put_fp16(blk + 108, jitter(9.0e-4f, rng));
        break;
    case MEMRA_QTYPE_Q4_K:
        // 6-bit sc, m (0..63) and q in 0..15: dmin ~ 7.5 d centres a sub-block; rms ~ 250 d.
        put_fp16(blk + 0, jitter(1.6e-4f, rng));
        put_fp16(blk + 2, jitter(1.2e-3f, rng));
        break;
    case MEMRA_QTYPE_Q5_K:  // as Q4_K with q in 0..31: dmin ~ 15.5 d
        put_fp16(blk + 0, jitter(8.0e-5f, rng));
        put_fp16(blk + 2, jitter(1.2e-3f, rng));
        break;
    case MEMRA_QTYPE_Q6_K:
        // int8 scales (rms 74) x q in -32..31 (rms 18.5): d ~ 3e-5 is an fp16 subnormal, which is
        // what real Q6_K files hold too (formats spec §8.1).
        put_fp16(blk + 208, jitter(3.0e-5f, rng));
        break;
    case MEMRA_QTYPE_IQ3_S:  // odd scales 1..31 (rms 18.5) x grid magnitudes (odd, 1..15)
        put_fp16(blk, jitter(4.0e-4f, rng));
        break;
    case MEMRA_QTYPE_IQ4_XS:  // (ls - 32) in -32..31 (rms 18.5) x code book (rms 67)
        put_fp16(blk, jitter(3.2e-5f, rng));
        break;
    case MEMRA_QTYPE_MXFP4:
        // One E8M0 byte: ggml's decode is 2^(e-128); e = 121 (0.0078, sometimes 120: 0.0039) times
        // the doubled E2M1 code book (rms 5.9).
        blk[0] = uint8_t((rng() % 4 == 0) ? 120 : 121);
        break;
    case MEMRA_QTYPE_NVFP4:
        // Four UE4M3 sub-block scales; E = 1 (sometimes 2), any mantissa, bit 7 clear: ggml's
        // decode gives 0.0078..0.029, times the doubled E2M1 code book (rms 5.9).
        for (int s = 0; s < 4; ++s) {
            const uint32_t e = (rng() % 4 == 0) ? 2u : 1u;
            blk[s] = uint8_t((e << 3) | (rng() & 7));
        }
        break;
    default:
        throw std::invalid_argument("no block scales for " + qtype_name(qtype));
    }
}

}  // namespace

std::vector<uint8_t> random_weights(int32_t qtype, int32_t rows, int32_t in_features,
                                    std::mt19937_64 &rng) {
    const memra_qtype_info &info = qtype_info(qtype);
    if (rows < 1 || in_features < 1 || in_features % info.block_elems != 0)
        throw std::invalid_argument("random_weights: bad shape for " + qtype_name(qtype));
    const size_t count = size_t(rows) * size_t(in_features);
    std::vector<uint8_t> out(count / size_t(info.block_elems) * size_t(info.block_bytes));

    if (qtype == MEMRA_QTYPE_F32 || qtype == MEMRA_QTYPE_BF16) {
        std::normal_distribution<float> value(0.0f, 0.04f);
        for (size_t i = 0; i < count; ++i) {
            if (qtype == MEMRA_QTYPE_F32)
                store_f32(&out[4 * i], value(rng));
            else
                store_u16(&out[2 * i], f32_to_bf16(value(rng)));
        }
        return out;
    }
    for (uint8_t &b : out) b = uint8_t(rng());
    for (size_t off = 0; off < out.size(); off += size_t(info.block_bytes))
        set_block_scales(qtype, &out[off], rng);
    return out;
}

std::vector<float> random_input(int32_t n, std::mt19937_64 &rng, float sigma) {
    std::normal_distribution<float> value(0.0f, sigma);
    std::vector<float> x(static_cast<size_t>(n));
    for (float &v : x) v = value(rng);
    return x;
}

}  // namespace memra::expertkit
