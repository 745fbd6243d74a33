#include "plan.h"

#include "formats.h"

namespace memra::conformance {
namespace {

constexpr int32_t kTileRows = 37;
// Longer than the token path's activation window (plugins/simd/common.h kActWindowBytes: 16 KiB
// of quantized activations, at most 15392 values in any activation format) with a partial last
// window, and a multiple of every format's block (65 x 256); 33 rows are two row groups of 16
// and one more.
constexpr int32_t kLongRow = 16640;

// A second, longer row: several blocks, or for the block-less F32 / BF16 a SIMD tail.
int32_t longer_in(int32_t block) { return block == 1 ? 37 : 2 * block; }

}  // namespace

Plan small_plan(int32_t qtype) {
    const int32_t block = expertkit::qtype_info(qtype).block_elems;
    Plan p;
    for (int32_t in : {block, longer_in(block)})
        for (int32_t out : {1, 7, 33}) p.kernels.push_back({in, out, 64});
    p.calls.push_back({block, block, {1, 2, 5, 64}, 3});
    // Not square, and for the block-less formats tails in both directions; 64 rows are left to
    // the smallest expert, where they cost the scalar reference least.
    p.calls.push_back({longer_in(block), block == 1 ? 53 : 3 * block, {2, 5}, 4});
    return p;
}

Plan realistic_plan(int32_t qtype, Scope scope) {
    (void)qtype;  // every format is legal at these shapes (multiples of 256)
    const bool full = scope == Scope::Full;
    Plan p;
    for (const auto &[n_embd, n_ff] : {std::pair{4096, 1536}, std::pair{2048, 768}}) {
        // gate/up (n_embd -> n_ff rows) and down (n_ff -> n_embd rows)
        p.kernels.push_back({n_embd, full ? n_ff : kTileRows, full ? 64 : 5});
        p.kernels.push_back({n_ff, full ? n_embd : kTileRows, full ? 64 : 5});
    }
    p.kernels.push_back({kLongRow, 33, 64});
    if (full) {
        p.calls.push_back({4096, 1536, {1, 2, 5, 64}, 8, 2});
        p.calls.push_back({2048, 768, {1, 2, 5, 64}, 8, 2});
    } else {
        p.calls.push_back({2048, 768, {1, 5}, 2, 2});
    }
    return p;
}

}  // namespace memra::conformance
