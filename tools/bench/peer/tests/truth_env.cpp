#include "truth_env.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#include "backends.h"
#include "dispatch/cpu_features.h"
#include "dispatch/settings.h"

namespace memra::truth {
namespace {

struct Peer {
    std::unique_ptr<bench::GgmlPeer> peer;
    std::string absent;
};

const Peer &loaded_peer() {
    static const Peer p = [] {
        Peer r;
        const std::string module = MEMRA_GGML_PEER_MODULE;
        if (module.empty()) {
            r.absent = "the peer module was not built (this build found no ggml: run "
                       "tools/bench/peer/fetch-ggml-peer BUILD_DIR/ggml-peer and reconfigure)";
            return r;
        }
        try {
            r.peer = std::make_unique<bench::GgmlPeer>(module);
        } catch (const std::exception &e) {
            r.absent = e.what();
        }
        return r;
    }();
    return p;
}

struct Plugins {
    std::unique_ptr<conformance::BackendSet> set;
    std::vector<Plugin> runnable;
    std::vector<std::string> skipped;
};

const Plugins &plugins() {
    static const Plugins p = [] {
        Plugins r;
        conformance::BackendLocations where;
        where.library_backend_dir = MEMRA_BACKEND_BUILD_DIR;
        where.test_backend_dir = MEMRA_TEST_BACKEND_BUILD_DIR;
        r.set = std::make_unique<conformance::BackendSet>(where, detect_cpu_features(),
                                                          read_settings().disabled_features);
        if (const conformance::Backend *ref = r.set->reference()) r.runnable.push_back({"scalar", ref->table});
        for (const conformance::Backend &b : r.set->subjects()) {
            // ggml's truth is about ggml's bytes: a test build whose kernels read a layout of their
            // own (rows_interleaved) is held to scalar through its repack by the conformance suite,
            // and its kernels are another build's.
            if (b.runnable() && b.table->kernel_count > 0 && b.table->kernels[0].layout != MEMRA_LAYOUT_GGML) continue;
            if (b.runnable())
                r.runnable.push_back({b.label, b.table});
            else
                r.skipped.push_back(b.label + ": " + b.skip_reason);
        }
        return r;
    }();
    return p;
}

}  // namespace

bench::GgmlPeer *ggml_peer() { return loaded_peer().peer.get(); }
const std::string &ggml_absent_reason() { return loaded_peer().absent; }

bool ggml_f32_order_is_memras() { return ggml_peer() && ggml_peer()->has_feature("AVX512"); }
bool ggml_bf16_order_is_memras() { return ggml_peer() && ggml_peer()->has_feature("AVX512_BF16"); }

const std::vector<Plugin> &runnable_plugins() { return plugins().runnable; }
const std::vector<std::string> &skipped_plugins() { return plugins().skipped; }

const memra_kernel_v2 *kernel_of(const Plugin &p, int32_t qtype) {
    return conformance::find_kernel(*p.table, qtype);
}

bool same_float(float a, float b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    uint32_t x, y;
    std::memcpy(&x, &a, 4);
    std::memcpy(&y, &b, 4);
    return x == y;
}

std::string show(float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g (0x%08x)", double(v), bits);
    return buf;
}

}  // namespace memra::truth
