// The process-wide choice of backends: which plugin serves each qtype on each path (token: gemv,
// rows: gemm), which quantizer produces each activation format, and, when nothing can run, why.
// Built once at load from the settings, the CPU features and the plugins found; immutable
// afterwards, so every call reads it without locking.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "dispatch/cpu_features.h"
#include "memra/backend.h"
#include "dispatch/plugin_loader.h"
#include "dispatch/settings.h"

namespace memra {

using QuantizeFn = void (*)(const float *x, int32_t n, void *out);

// The two ways a kernel is applied: to one activation row (the token call's gemv) or to several
// at once (the rows call's gemm).
enum class KernelPath : int { kGemv = 0, kGemm = 1 };
constexpr int kKernelPaths = 2;
const char *path_name(KernelPath path);  // "token", "rows"

struct KernelChoice {
    const memra_kernel_v2 *kernel = nullptr;
    const memra_backend_v2 *backend = nullptr;
};

// Per qtype and per path, the highest-priority plugin that serves it: the selection on its own,
// from tables given best first (BackendRegistry feeds it the loaded plugins).
//
// Weights in a plugin's own layout (memra_kernel_v2::layout != 0). Both choices are recorded:
// the best kernel on weights in ggml's layout, and the best in any layout; which one a projection
// gets is planned_kernel's decision (below):
//  - file-backed weights with the weight cache on: the best kernel in any layout. The bytes are
//    read into the cache under a key with the kernel's layout (CacheKey::layout) and repacked
//    once as the entry is filled (core/weights/repack.h), before it is published, so every later
//    call finds them repacked; the prefetcher fills entries under the token path's choice
//    (prefetch_kernel). Bytes the cache cannot take at that moment (budget full of pinned
//    entries, memory refused, the descriptor limit) are repacked in the call's streaming memory:
//    the plan is made before the cache is asked, and stays valid whatever it answers.
//  - file-backed weights with the cache off (budget 0): every call streams them, so they keep the
//    ggml-layout kernel (a repack per call would only add work), unless none serves the path.
//  - weights in the caller's memory: not repacked per call (a repack costs more than the call
//    reads), so they keep the ggml-layout kernel of that path. A bounded repack cache keyed by
//    (pointer, length, layout) would only be sound for bytes the caller promises never to change,
//    which the v2 ABI cannot express; left out.
// Tiles of a repacked matrix start at multiples of the kernel's row_group (cut_tiles).
class KernelTable {
public:
    // Fills what the tables added before left empty: each qtype's path in ggml's layout and in
    // any layout, and each activation format's quantizer.
    void add(const memra_backend_v2 *table);

    // The best kernel serving `path` of `qtype` on weights in ggml's layout (any_layout false: the
    // weights as the caller or the file hold them), or in any layout (true: the best kernel
    // overall, which may want its weights repacked). nullptr kernel: no plugin serves it.
    KernelChoice kernel_for(int32_t qtype, KernelPath path, bool any_layout = false) const;
    QuantizeFn quantizer_for(int32_t act_format) const { return quantizers_[act_format]; }

private:
    struct Slot {
        KernelChoice ggml, any;
    };
    std::array<std::array<Slot, kKernelPaths>, 64> slots_{};  // [ggml type id (all < 64)][path]
    std::array<QuantizeFn, MEMRA_ACT_FORMAT_COUNT> quantizers_{};
};

class BackendRegistry {
public:
    // `library_backend_dir`: the directory beside the core library (default_backend_dir() for
    // the library itself; a tool inspecting an installed library passes that library's).
    BackendRegistry(Settings settings, const CpuFeatures &cpu, std::string library_backend_dir);

    bool usable() const { return unusable_reason_.empty(); }
    const std::string &unusable_reason() const { return unusable_reason_; }

    // As KernelTable::kernel_for.
    KernelChoice kernel_for(int32_t qtype, KernelPath path, bool any_layout = false) const {
        return kernels_.kernel_for(qtype, path, any_layout);
    }
    QuantizeFn quantizer_for(int32_t act_format) const { return kernels_.quantizer_for(act_format); }

    const memra_backend_v2 *primary() const { return primary_; }
    const std::vector<PluginRecord> &plugins() const { return plugins_; }
    const std::vector<std::string> &search_dirs() const { return search_dirs_; }
    const Settings &settings() const { return settings_; }
    uint64_t usable_features() const { return usable_features_; }

    // Who serves `qtype`: "avx512" when one plugin serves both paths in ggml's layout, else
    // "token avx512, rows amx"; a plugin above serving a path only in a layout of its own is
    // noted ("rows avx512 (amx for cached file weights)"): memory-backed calls cannot use it.
    std::string served_by(int32_t qtype) const;

    // One line: the backend, how it was chosen, which plugin serves which qtypes (per path where
    // they differ), and each plugin found with its state; or why the library cannot compute.
    std::string describe() const;

private:
    void select();

    Settings settings_;
    uint64_t usable_features_ = 0;
    std::vector<std::string> search_dirs_;
    std::vector<PluginRecord> plugins_;
    const memra_backend_v2 *primary_ = nullptr;
    KernelTable kernels_;
    std::string unusable_reason_;
};

// The kernel serving `path` of `qtype` for a projection whose bytes are `file_backed` (else in
// the caller's memory), with the weight cache on (`file_cache`: its budget is not 0) or off.
// File-backed bytes the cache will hold take the best kernel in any layout: they are repacked
// once, as the cache entry is filled, and every later call and the prefetcher (prefetch_kernel)
// find them so. Everything else takes the best kernel on ggml's layout, the bytes as they are
// (the note above KernelTable says why); a file-backed projection with the cache off falls back
// to a repacking kernel only when no kernel reads ggml's layout (then repacked per call).
KernelChoice planned_kernel(const BackendRegistry &registry, int32_t qtype, KernelPath path, bool file_backed,
                            bool file_cache);

// The kernel whose layout the prefetcher fills the cache in for a projection of `qtype`: the
// token path's, as planned_kernel gives it to a file-backed projection with the cache on. Prefetch
// serves the engine's token calls (the experts of the next tokens); a rows call on a path whose
// best kernel has another layout reads its own entry once (docs/file-weights.md, "Keying").
// nullptr: ggml's layout.
const memra_kernel_v2 *prefetch_kernel(const BackendRegistry &registry, int32_t qtype);

}  // namespace memra
