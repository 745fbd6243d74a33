// How far a kernel's dots lie from exact arithmetic, per row, normalised so that cancellation
// cannot inflate them: |y - exact| / sum |terms|.
//   dot alone:  against the exact sum of the quantized values (the dequantized weights times
//               the values the quantized activations stand for): isolates the float order.
//   end to end: against the dequantized weights times the unquantized f32 input: adds the
//               activation quantization, the error a user sees.
// No bound is asserted: a kernel's float terms can be much larger than sum |terms| (the scale
// and min terms of Q2_K / Q4_K / Q5_K cancel; version 1's Q6_K lanes carry the +32 offset until
// the integer correction), so the errors are measured and compared, not judged.
#pragma once

#include <cstdint>

#include "data.h"
#include "memra/backend.h"

namespace memra::fidelity {

struct ErrorStats {
    double mean = 0, max = 0;
};

struct Fidelity {
    ErrorStats dot, end_to_end;
};

// kernel->gemv over every row of p (the token path; a kernel with a layout of its own gets its
// repack first).
Fidelity measure(const memra_kernel_v2 &kernel, const Problem &p);

}  // namespace memra::fidelity
