// What every ggml truth test (issue 19, item 5; docs/conformance.md, "ggml as independent truth")
// needs: ggml itself, through the bench's peer module (memra-bench-ggml-peer.so, loaded once per
// process), or the reason it is absent; memra's plugin modules as the core's loader finds them on
// this CPU; and what "the same float" means when ggml's bits are the truth.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memra/backend.h"
#include "peer_module.h"

namespace memra::truth {

// ggml's CPU backend (the peer module built from tools/bench/peer), or nullptr when the module was
// not built (no fetched ggml) or cannot load; ggml_absent_reason() then says which, in one line.
bench::GgmlPeer *ggml_peer();
const std::string &ggml_absent_reason();

// Every test starts with this: without ggml there is no truth to compare with, so it skips.
#define MEMRA_TRUTH_REQUIRE_GGML()                                                                 \
    do {                                                                                           \
        if (!::memra::truth::ggml_peer())                                                          \
            GTEST_SKIP() << "ggml peer absent: " << ::memra::truth::ggml_absent_reason();          \
    } while (0)

// The tests that hold memra to ggml's float order (activation rounding, dots, whole calls) need
// ggml's x86 AVX2 kernels, the order memra reproduces (formats spec §5; every variant from haswell
// up has them): with another variant they skip, saying so.
#define MEMRA_TRUTH_REQUIRE_GGML_AVX2()                                                            \
    do {                                                                                           \
        MEMRA_TRUTH_REQUIRE_GGML();                                                                \
        if (!::memra::truth::ggml_peer()->avx2_kernels())                                          \
            GTEST_SKIP() << "ggml's CPU variant (" << ::memra::truth::ggml_peer()->variant()         \
                         << ") lacks the AVX2 kernels whose float order memra reproduces";         \
    } while (0)

// F32 dots: memra's own order (64 lanes folded by halves, plugins/scalar/dot_float.cpp) is the one
// ggml's AVX-512 build sums in (4 x 16 lanes), so with that variant and rows of whole 64s the two
// agree bit for bit; with the AVX2 variant (32 lanes) they differ in the last bits.
bool ggml_f32_order_is_memras();
// BF16 dots: memra's order is vdpbf16ps's as ggml_vec_dot_bf16 uses it (plugins/scalar/
// dot_float.cpp), so with a ggml variant built for AVX512_BF16 the two agree bit for bit; other
// variants widen to f32 and sum in their own lanes.
bool ggml_bf16_order_is_memras();

// A plugin module of the build tree that this CPU runs (the scalar reference first, then every
// SIMD plugin and the emulated-VNNI test build), found and gated by the core's own loader as the
// conformance suite finds them (conformance/runner/backends.h).
struct Plugin {
    std::string label;
    const memra_backend_v2 *table;
};
const std::vector<Plugin> &runnable_plugins();
// "label: why" for the plugins this CPU cannot run (reported, not failed).
const std::vector<std::string> &skipped_plugins();
// The kernel of qtype in a plugin's table, or nullptr.
const memra_kernel_v2 *kernel_of(const Plugin &p, int32_t qtype);

// a and b are the same value for ggml-as-truth: identical bits, or both NaN (payloads and the
// quiet bit are not compared: ggml itself does not promise them).
bool same_float(float a, float b);
// "1.5 (0x3fc00000)".
std::string show(float v);

}  // namespace memra::truth
