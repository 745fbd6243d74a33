// Which shapes a conformance run checks for each format, shared by the GoogleTest suite and
// memra-conformance so that both mean the same thing by "conformant".
//
// Small shapes reach the edges: the smallest legal in_features of the format (one block; 1 for
// F32 and BF16), a length with a tail (37 values for F32 / BF16, which have no blocks), and
// out_features 1, 7 and 33 (no multiple of any kernel's row blocking or of the core's 8-row
// tile multiple), each with every gemm width 1, 2, 5 and 64; full calls on the smallest legal
// expert with 1, 2, 5 and 64 rows and a token of 3 experts, and on a non-square one with 2 and 5
// rows and a token of 4.
//
// Realistic shapes are the expert matrices of real MoE models: 4096 x 1536 (gate/up of a
// 4096-wide model with 1536-wide experts; down is 1536 x 4096) and 2048 x 768. Through the
// scalar reference (~0.4 GB/s) they are slow, so by default their kernels are checked on a
// 37-row tile (the full row length, which is what decides a dot product's summation, times a
// row count that is again no multiple of any blocking) with gemm widths up to 5, and the full
// calls on 2048 x 768 with 1 and 5 rows and a token of 2 experts. Scope::Full takes the whole
// matrices with gemm widths up to 64, and full calls on both realistic experts with 1, 2, 5 and
// 64 rows and a token of 8. Both scopes add 33 rows of 16640 values with gemm widths up to 64:
// rows longer than the token path's activation window.
#pragma once

#include <cstdint>
#include <vector>

#include "call_case.h"
#include "kernel_case.h"

namespace memra::conformance {

enum class Scope { Default, Full };

struct Plan {
    std::vector<KernelShape> kernels;
    std::vector<CallShape> calls;
};

Plan small_plan(int32_t qtype);
Plan realistic_plan(int32_t qtype, Scope scope);

}  // namespace memra::conformance
