// The weight bytes the decode and dot truths feed to ggml and to memra: for each format, blocks of
// uniformly random bytes (every byte pattern of these formats is a valid block: codes index full
// tables, scales are any fp16/UE4M3/bf16/f32 pattern), realistic blocks (the expert kit's synthetic
// weights), and edge cases: all-zero and all-0xFF blocks, and every scale field set in turn to the
// special values of its type (fp16: +-0, smallest and largest subnormal, smallest normal, 1, +-max,
// +-inf, quiet and signalling NaN; UE4M3: 0, subnormals, the largest, the NaN byte 0x7F and the
// sign-bit bytes), with the code bytes random, at their minimum (0x00), maximum (0xFF) or the
// int8 extremes (0x80, 0x7F). F32 and BF16 (a block is one value) get the same special values
// spread through random ones.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace memra::truth {

struct Blocks {
    std::vector<uint8_t> bytes;       // whole blocks of the format, back to back
    std::vector<std::string> labels;  // one per block: how it was made ("d=0x7c00 codes=0xff")
    int32_t count() const { return int32_t(labels.size()); }
};

Blocks truth_blocks(int32_t qtype, uint64_t seed);

// The label of the block holding value i.
std::string label_of_value(const Blocks &b, int32_t qtype, int64_t i);

}  // namespace memra::truth
