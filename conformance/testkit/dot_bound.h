// How far memra's dot of a quantized row (the canonical order v2, formats spec §5.3) may lie from
// another float order of the same dot, ggml's x86 vec_dot (§5.2) in particular: the bound the
// ggml truth tests compare dots with now that memra no longer sums in ggml's order.
//
// Derivation. Both orders add the same exact terms t = D * S (per scale block: the exact int32
// S of §5.3, D the same f32 product in both; ggml splits each S over eight int lanes, which only
// splits t) and the min terms N * M, with one rounding per addition: v2 one fma per term and
// nothing else; ggml one fma per block and lane, then three folds of eight lanes (and Q6_K's
// |S| can pass 2^24 in v2, one more rounding at the conversion). Each result is so within
// gamma_k * T of the exact sum (Higham, Accuracy and Stability, (3.5)): k at most terms + 4,
// T = sum of |t| over every term and lane. |t| <= sum over the block's elements of
// |d sc q_i| * |a_i| (the scale part of each decoded weight) + |dmin m| * |a_i| (its min part), so
// T <= sum_i (|scale part_i| + |min part_i|) |a_i|, which this computes from the decoded weights
// (the min part by decoding a copy with d = 0, the scale part with dmin = 0) and activations.
// Two such results differ by at most 2 gamma_k T; 1% more covers the decoder's own rounding of
// each weight (d * sc, then * q: a relative 2^-23). The bound needs T <= FLT_MAX (no partial sum
// can overflow); beyond (and where a scale is infinite or NaN) it is +inf: the orders may then
// overflow at different points, and only the conformance suite's bit-for-bit checks against the
// scalar plugin hold such rows.
#pragma once

#include <cstdint>

namespace memra::testkit {

// The bound on |v2 dot - other order's dot| of one row of n values against the quantized
// activation act_q (the format's activation layout), for the integer-dot formats.
double dot_order_bound(int32_t qtype, const uint8_t *row, const void *act_q, int32_t n);

}  // namespace memra::testkit
