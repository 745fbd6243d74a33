// The pure parts of `memra-bench --peer ggml` (docs/benchmarks.md, "The ggml peer"), apart from the
// measuring so that the unit tests reach them: how two outputs are compared, how close ggml's
// must come to memra's, and the wait for idle threads between turns (the sampler that alternates
// contenders rep by rep is sample_alternating of sampler.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sampler.h"

namespace memra::bench {

// Rows of the peer rows step: tokens all routed to one expert (the rows issue's m = 32).
constexpr int32_t kPeerRows = 32;

struct OutputComparison {
    double rel_error = 0;    // ||got - ref||_2 / ||ref||_2 (0 when both are all zeros; inf when only ref is)
    double max_abs = 0;      // largest |got - ref|
    size_t differing = 0;    // values that are not equal (as floats: -0 equals +0; NaN equals nothing)
    bool identical() const { return differing == 0; }
};

OutputComparison compare_outputs(const float *ref, const float *got, size_t n);

// Which ggml output is compared with memra's.
enum class PeerCheck {
    Shipped,    // ggml as users get it, weights in a CPU buffer over memra's bytes (variant ggml)
    ExactSilu,  // the same graph with the contract's silu in place of ggml's swiglu (untimed)
    Repacked,   // ggml with its extra buffer type's repacked weights (variant ggml_repack)
};
const char *check_name(PeerCheck check);

// How close that output must come to memra's for `format` (a ggml type name) in step `mode`
// (peer_token, peer_rows); the measurements behind each bound are in peer_compare.cpp.
struct AgreementRule {
    bool identical = false;  // every value equal
    double bound = 0;        // else: rel_error at most this
};
// avx2_kernels: ggml's CPU variant has the x86 AVX2 dot kernels (GgmlPeer::avx2_kernels); the
// other variants (x64, sse42, sandybridge, ivybridge, piledriver) sum in other orders. Since
// memra's canonical order v2 no rule depends on it or on the mode and check: every quantized
// format is held to one bound (peer_compare.cpp); the parameters stay for the records' checks.
AgreementRule agreement_rule(const std::string &format, const std::string &mode, PeerCheck check,
                             bool avx2_kernels);

// "" when the comparison meets the rule, else one line saying how it does not.
std::string agreement_problem(const std::string &format, const std::string &mode, PeerCheck check,
                              bool avx2_kernels, const OutputComparison &c);

// The state letter of a /proc/PID/task/TID/stat line (R running, S sleeping, ...): the field after
// the parenthesised command name, which may itself hold spaces and parentheses; '?' if malformed.
char task_state(const std::string &stat_line);

// Sleeps in short steps until no thread of this process other than the caller is running ('R'),
// or max_seconds passed; returns the seconds waited. The previous contender's idle workers (an
// OpenMP team spinning after its region, a ggml pool polling for work) then no longer compete
// for the cores with the next one.
double wait_for_idle_threads(double max_seconds);

}  // namespace memra::bench
