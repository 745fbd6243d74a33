#include "truth_blocks.h"

#include <cstdio>
#include <cstring>
#include <random>

#include "formats.h"
#include "memra/cpu_experts.h"
#include "memra/qtypes.h"
#include "synthetic_weights.h"

namespace memra::truth {
namespace {

enum class Field { Fp16, Ue4m3, E8m0 };

struct ScaleFields {
    Field kind;
    std::vector<int> offsets;  // byte offsets of the scale fields in a block
};

// Where each block keeps its float scales (the formats spec, ../shared/formats/README.md §3).
ScaleFields scale_fields(int32_t qtype) {
    switch (qtype) {
    case MEMRA_QTYPE_Q4_0:
    case MEMRA_QTYPE_Q8_0:
    case MEMRA_QTYPE_IQ3_S:
    case MEMRA_QTYPE_IQ4_XS: return {Field::Fp16, {0}};
    case MEMRA_QTYPE_Q2_K: return {Field::Fp16, {80, 82}};    // d, dmin
    case MEMRA_QTYPE_Q3_K: return {Field::Fp16, {108}};
    case MEMRA_QTYPE_Q4_K:
    case MEMRA_QTYPE_Q5_K: return {Field::Fp16, {0, 2}};      // d, dmin
    case MEMRA_QTYPE_Q6_K: return {Field::Fp16, {208}};
    case MEMRA_QTYPE_MXFP4: return {Field::E8m0, {0}};
    case MEMRA_QTYPE_NVFP4: return {Field::Ue4m3, {0, 1, 2, 3}};  // one per 16-value sub-block
    default: return {Field::Fp16, {}};
    }
}

const std::vector<uint16_t> kFp16Specials = {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3c00,
                                             0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xffff};
const std::vector<uint8_t> kUe4m3Specials = {0x00, 0x01, 0x07, 0x08, 0x38, 0x7e, 0x7f, 0x80, 0x81, 0xfe, 0xff};
// E8M0 (ggml decodes 2^(e-128)): the two subnormal results (0, 1), the smallest normal (2), around
// 1.0 (0x7f, 0x80, 0x81), a real weight's range (0x76, 0x79), large (0xc0, 0xfe) and 0xff, which
// ggml decodes to 2^127, not NaN.
const std::vector<uint8_t> kE8m0Specials = {0x00, 0x01, 0x02, 0x03, 0x76, 0x79, 0x7f, 0x80, 0x81, 0xc0, 0xfe, 0xff};
const std::vector<uint16_t> kBf16Specials = {0x0000, 0x8000, 0x0001, 0x807f, 0x0080, 0x3f80, 0x7f7f,
                                             0xff7f, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0xffff};
const std::vector<uint32_t> kF32Specials = {0x00000000, 0x80000000, 0x00000001, 0x807fffff, 0x00800000,
                                            0x3f800000, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000,
                                            0x7fc00000, 0x7f800001, 0xffffffff};
// Code bytes around the scale fields: -1 = random.
const std::vector<int> kCodeFills = {-1, 0x00, 0xff, 0x80, 0x7f};

std::string hex(unsigned v, int digits) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%0*x", digits, v);
    return buf;
}

std::string fill_name(int fill) { return fill < 0 ? "random" : hex(unsigned(fill), 2); }

void add_block(Blocks &b, const std::vector<uint8_t> &block, const std::string &label) {
    b.bytes.insert(b.bytes.end(), block.begin(), block.end());
    b.labels.push_back(label);
}

// F32 and BF16: one value per block; the specials each several times among random values.
Blocks plain_values(int32_t qtype, std::mt19937_64 &rng) {
    const int width = qtype == MEMRA_QTYPE_F32 ? 4 : 2;
    Blocks b;
    std::vector<uint8_t> v(static_cast<size_t>(width));
    auto random_value = [&] {
        for (uint8_t &x : v) x = uint8_t(rng());
        add_block(b, v, "random bytes");
    };
    for (int i = 0; i < 4096; ++i) random_value();
    for (int round = 0; round < 8; ++round) {
        if (width == 4)
            for (uint32_t s : kF32Specials) {
                std::memcpy(v.data(), &s, 4);
                add_block(b, v, "value " + hex(s, 8));
                random_value();
            }
        else
            for (uint16_t s : kBf16Specials) {
                std::memcpy(v.data(), &s, 2);
                add_block(b, v, "value " + hex(s, 4));
                random_value();
            }
    }
    std::vector<uint8_t> sane = expertkit::random_weights(qtype, 1, 1024, rng);
    for (size_t at = 0; at < sane.size(); at += size_t(width)) {
        std::memcpy(v.data(), &sane[at], size_t(width));
        add_block(b, v, "synthetic");
    }
    return b;
}

}  // namespace

Blocks truth_blocks(int32_t qtype, uint64_t seed) {
    std::mt19937_64 rng(seed);
    if (qtype == MEMRA_QTYPE_F32 || qtype == MEMRA_QTYPE_BF16) return plain_values(qtype, rng);
    const memra_qtype_info &info = expertkit::qtype_info(qtype);
    const size_t bytes = size_t(info.block_bytes);
    Blocks b;
    std::vector<uint8_t> block(bytes);
    auto fill = [&](int with) {
        for (uint8_t &x : block) x = with < 0 ? uint8_t(rng()) : uint8_t(with);
    };

    for (int i = 0; i < 512; ++i) {
        fill(-1);
        add_block(b, block, "random bytes");
    }
    const std::vector<uint8_t> sane = expertkit::random_weights(qtype, 64, info.block_elems, rng);
    for (size_t at = 0; at < sane.size(); at += bytes)
        add_block(b, std::vector<uint8_t>(sane.begin() + long(at), sane.begin() + long(at + bytes)), "synthetic");
    for (int with : {0x00, 0xff}) {
        fill(with);
        add_block(b, block, "all " + hex(unsigned(with), 2));
    }

    // Each scale field in turn, then all of them at once, at every special value.
    const ScaleFields fields = scale_fields(qtype);
    std::vector<std::vector<int>> which;
    for (int off : fields.offsets) which.push_back({off});
    if (fields.offsets.size() > 1) which.push_back(fields.offsets);
    const size_t specials = fields.kind == Field::Fp16    ? kFp16Specials.size()
                            : fields.kind == Field::Ue4m3 ? kUe4m3Specials.size()
                                                          : kE8m0Specials.size();
    for (const std::vector<int> &set : which)
        for (size_t s = 0; s < specials; ++s)
            for (int codes : kCodeFills) {
                fill(codes);
                std::string label;
                for (int off : set) {
                    if (fields.kind == Field::Fp16) {
                        const uint16_t v = kFp16Specials[s];
                        std::memcpy(&block[size_t(off)], &v, 2);
                        label += "fp16@" + std::to_string(off) + "=" + hex(v, 4) + " ";
                    } else {
                        const bool ue4m3 = fields.kind == Field::Ue4m3;
                        block[size_t(off)] = ue4m3 ? kUe4m3Specials[s] : kE8m0Specials[s];
                        label += (ue4m3 ? "ue4m3@" : "e8m0@") + std::to_string(off) + "=" + hex(block[size_t(off)], 2) + " ";
                    }
                }
                add_block(b, block, label + "codes " + fill_name(codes));
            }
    return b;
}

std::string label_of_value(const Blocks &b, int32_t qtype, int64_t i) {
    const int64_t block = i / expertkit::qtype_info(qtype).block_elems;
    return "block " + std::to_string(block) + " (" + b.labels[size_t(block)] + "), value " +
           std::to_string(i % expertkit::qtype_info(qtype).block_elems);
}

}  // namespace memra::truth
