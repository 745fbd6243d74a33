#include "peer_compare.h"

#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

namespace memra::bench {

OutputComparison compare_outputs(const float *ref, const float *got, size_t n) {
    OutputComparison c;
    double diff2 = 0, ref2 = 0;
    for (size_t i = 0; i < n; ++i) {
        const double d = double(got[i]) - double(ref[i]);
        if (!(got[i] == ref[i])) ++c.differing;
        diff2 += d * d;
        ref2 += double(ref[i]) * double(ref[i]);
        c.max_abs = std::max(c.max_abs, std::fabs(d));
        if (std::isnan(d)) c.max_abs = d;
    }
    c.rel_error = ref2 > 0 ? std::sqrt(diff2 / ref2) : diff2 > 0 ? std::numeric_limits<double>::infinity() : 0;
    if (std::isnan(diff2)) c.rel_error = diff2;
    return c;
}

const char *check_name(PeerCheck check) {
    switch (check) {
    case PeerCheck::Shipped: return "ggml";
    case PeerCheck::ExactSilu: return "ggml with the contract's silu";
    case PeerCheck::Repacked: return "ggml_repack";
    }
    return "?";
}

// Measured on the development VM (AMD EPYC Zen 5, ggml 0.25.1 of llama.cpp v0.5.0, CPU variant
// zen4), all 12 formats, both steps, at the --quick shape (512 x 256, 40 seeds) and the default
// shape (4096 x 1536, 3 seeds); docs/benchmarks.md, "The ggml peer".
//
// Quantized formats. memra's activation quantizers and decoders are ggml's bit for bit, but its
// dots sum in the canonical order v2 (the formats spec, section 5.3: one fma per scale block),
// ggml's x86 vec_dot in eight lanes per block (5.2) and its batched IQ path (iqp.cpp) and other
// CPU variants in orders of their own: each dot lies within a few ulps of its magnitude of the
// exact one (two orders: testkit/dot_bound.h derives the bound on their difference), so gate and
// up differ in the last bits, like ggml's silu below; no step is bit-identical any more.
// ggml as shipped computes silu with its vectorised expf (ggml_v_silu), which differs from expf
// in the last bit of about a quarter of the values. h is requantized for down (Q8_0 or Q8_K); a
// last-bit change in h reaches the output when it moves a Q8_K block's float scale (that block's
// contribution moves by an ulp: rel. error up to 2.5e-7, in most K/IQ rows steps) or, rarely,
// flips one code (one h value moves by a quantization step: 8e-4 at the quick shape once in 40
// seeds, 4.8e-5 at the default shape, both IQ3_S rows). The repacked weights come with ggml's
// own 4-row activation quantizers (q8_0_4x8, q8_K_4x8: they round differently) and accumulation
// order: up to 3.6e-7, and 2e-4..1.3e-3 where a code flipped. For all of these 1e-2: it allows
// a few flipped codes and still catches any real mismatch (another expert, route weight or
// layout is an O(1) error). Before the canonical order v2 the exact-silu steps were bit-identical
// (the measurements above are of that time; a last-bit change in gate or up is what they show).
//
// F32: no activation rounding; ggml's AVX-512 dot sums in 4 x 16 lanes, memra in one fma chain
// per dot: measured <= 4e-7 (quick), 7e-7 (default shape); bound 1e-4.
// BF16: x and h are rounded to bf16 on both sides; gate and up differ in the last bits (ggml's
// vdpbf16ps pairs against one fma chain), which now and then rounds an h value to the
// neighbouring bf16 (a 2^-8 step) before down: measured <= 7.7e-5 (quick), 3.1e-5 (default
// shape); bound 1e-3.
AgreementRule agreement_rule(const std::string &format, const std::string &, PeerCheck, bool) {
    if (format == "f32") return {false, 1e-4};
    if (format == "bf16") return {false, 1e-3};
    return {false, 1e-2};
}

std::string agreement_problem(const std::string &format, const std::string &mode, PeerCheck check,
                              bool avx2_kernels, const OutputComparison &c) {
    const AgreementRule rule = agreement_rule(format, mode, check, avx2_kernels);
    char line[320];
    if (rule.identical) {
        if (c.identical()) return "";
        std::snprintf(line, sizeof line,
                      "%s: output differs from memra's in %zu values (rel. error %.3g, max |diff| %.3g); "
                      "bit-identical expected for %s",
                      check_name(check), c.differing, c.rel_error, c.max_abs, format.c_str());
        return line;
    }
    if (c.rel_error <= rule.bound) return "";  // NaN fails here too
    std::snprintf(line, sizeof line, "%s: output differs from memra's: rel. error %.3g > %.3g allowed for %s",
                  check_name(check), c.rel_error, rule.bound, format.c_str());
    return line;
}

char task_state(const std::string &stat_line) {
    const size_t close = stat_line.rfind(')');
    if (close == std::string::npos || close + 2 >= stat_line.size() || stat_line[close + 1] != ' ') return '?';
    return stat_line[close + 2];
}

namespace {

// Whether any thread of this process other than the caller is running.
bool others_running() {
    const long self = syscall(SYS_gettid);
    DIR *dir = opendir("/proc/self/task");
    if (!dir) return false;
    bool running = false;
    while (const dirent *e = readdir(dir)) {
        if (e->d_name[0] == '.' || std::atol(e->d_name) == self) continue;
        std::ifstream f(std::string("/proc/self/task/") + e->d_name + "/stat");
        std::string line;
        if (std::getline(f, line) && task_state(line) == 'R') {
            running = true;
            break;
        }
    }
    closedir(dir);
    return running;
}

}  // namespace

double wait_for_idle_threads(double max_seconds) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point start = Clock::now();
    for (;;) {
        const double waited = std::chrono::duration<double>(Clock::now() - start).count();
        if (!others_running() || waited >= max_seconds) return waited;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

}  // namespace memra::bench
