// memra-bench-ggml-peer.so (tools/bench/peer/) as memra-bench sees it: dlopen'ed by path, its C
// functions resolved with dlsym, every failure turned into an exception with the module's
// message. memra-bench never links ggml; without the module, --peer ggml says why and the bench
// measures memra alone.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "peer/ggml_peer_abi.h"
#include "weight_store.h"

namespace memra::bench {

// The module is not there or cannot be used; what() says why, in one line.
struct PeerUnavailable : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Where memra-bench looks for the module: ../lib/memra-bench-ggml-peer.so from its own directory
// (the build tree's layout; the module is not installed).
std::string default_peer_module_path();

class GgmlPeer {
public:
    // Loads the module and ggml's CPU backend; throws PeerUnavailable.
    explicit GgmlPeer(const std::string &module_path);
    ~GgmlPeer();
    GgmlPeer(const GgmlPeer &) = delete;
    GgmlPeer &operator=(const GgmlPeer &) = delete;

    // ggml's version, the CPU variant its loader chose, its extra buffer types.
    const std::string &describe() const { return describe_; }
    // The CPU variant ggml's loader chose ("zen4"), from the describe line.
    std::string variant() const;

    // ggml's tensors over the store's bytes (not copied), plus the repacked copy where ggml's
    // extra buffer type takes the format; returns which projections were repacked, "" if none.
    // The copy is advised huge pages when the store's bytes are (hugepages).
    std::string prepare(const WeightStore &store, bool hugepages);
    // The same for weights laid out by the caller (ggml_peer_abi.h, memra_ggml_peer_weights).
    std::string prepare(const memra_ggml_peer_weights &weights);
    bool repacked() const { return repacked_; }

    // The token and rows steps (ggml_peer_abi.h); layout MEMRA_GGML_PEER_PLAIN or _REPACKED.
    void token(int32_t layout, const std::vector<int32_t> &ids, const std::vector<float> &route_weights,
               const float *input, float *output, int32_t threads) const;
    void rows(int32_t layout, int32_t expert, const float *inputs, int32_t rows, const float *route_weights,
              float *outputs, int32_t threads) const;
    // ggml's thread pool stops polling and sleeps (between turns, untimed).
    void pause() const;

    // For the ggml truth tests (tools/bench/peer/tests); each throws with the module's message.
    // The projections' macro scales in the graph from now on (1 after prepare).
    void set_scales(float gate, float up, float down);
    // ggml's own decode of n values (whole blocks) of qtype: its to_float.
    void to_float(int32_t qtype, const void *src, float *dst, int64_t n) const;
    // ggml-cpu's activation quantizer for qtype (its from_float): the bytes its dots consume.
    void from_float(int32_t qtype, const float *src, void *dst, int64_t n) const;
    // ggml-cpu's dot of a row of qtype with an activation in its vec_dot_type (written to act_type).
    float vec_dot(int32_t qtype, int64_t n, const void *row, const void *act, int32_t *act_type) const;
    // Whether the CPU variant was built with AVX2: then its dot kernels are the x86 AVX2 ones of
    // the formats spec, section 5.2 (memra's canonical order v2, 5.3, is another float order).
    bool avx2_kernels() const { return avx2_; }
    // Whether ggml's CPU variant reports this feature ("AVX512", ...; ggml_backend_get_features).
    bool has_feature(const std::string &name) const;

private:
    void *handle_ = nullptr;
    memra_ggml_peer *peer_ = nullptr;
    memra_ggml_peer_close_fn close_ = nullptr;
    memra_ggml_peer_prepare_fn prepare_ = nullptr;
    memra_ggml_peer_token_fn token_ = nullptr;
    memra_ggml_peer_rows_fn rows_ = nullptr;
    memra_ggml_peer_pause_fn pause_ = nullptr;
    memra_ggml_peer_set_scales_fn set_scales_ = nullptr;
    memra_ggml_peer_to_float_fn to_float_ = nullptr;
    memra_ggml_peer_from_float_fn from_float_ = nullptr;
    memra_ggml_peer_vec_dot_fn vec_dot_ = nullptr;
    memra_ggml_peer_has_feature_fn has_feature_ = nullptr;
    std::string describe_;
    bool repacked_ = false;
    bool avx2_ = false;
};

}  // namespace memra::bench
