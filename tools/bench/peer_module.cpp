#include "peer_module.h"

#include <dlfcn.h>

#include <filesystem>

namespace memra::bench {
namespace {

template <class F>
F symbol(void *handle, const char *name, const std::string &path) {
    void *p = dlsym(handle, name);
    if (!p) throw PeerUnavailable(path + " lacks " + name);
    return reinterpret_cast<F>(p);
}

void check(int rc, const char *what, const char *error) {
    if (rc != 0) throw std::runtime_error(std::string("ggml peer ") + what + ": " + error);
}

}  // namespace

std::string default_peer_module_path() {
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    const std::filesystem::path dir = ec ? std::filesystem::path(".") : exe.parent_path();
    return (dir / ".." / "lib" / "memra-bench-ggml-peer.so").lexically_normal().string();
}

GgmlPeer::GgmlPeer(const std::string &path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        throw PeerUnavailable("ggml peer not built (no " + path +
                              "): run tools/bench/peer/fetch-ggml-peer BUILD_DIR/ggml-peer and reconfigure, "
                              "or give --peer-lib");
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) throw PeerUnavailable(std::string("cannot load the ggml peer: ") + dlerror());
    try {
        const auto abi = symbol<memra_ggml_peer_abi_version_fn>(handle_, "memra_ggml_peer_abi_version", path);
        if (abi() != MEMRA_GGML_PEER_ABI_VERSION)
            throw PeerUnavailable(path + " is of peer ABI " + std::to_string(abi()) + ", not " +
                                  std::to_string(MEMRA_GGML_PEER_ABI_VERSION) + ": rebuild it");
        const auto open = symbol<memra_ggml_peer_open_fn>(handle_, "memra_ggml_peer_open", path);
        const auto describe = symbol<memra_ggml_peer_describe_fn>(handle_, "memra_ggml_peer_describe", path);
        has_feature_ = symbol<memra_ggml_peer_has_feature_fn>(handle_, "memra_ggml_peer_has_feature", path);
        close_ = symbol<memra_ggml_peer_close_fn>(handle_, "memra_ggml_peer_close", path);
        prepare_ = symbol<memra_ggml_peer_prepare_fn>(handle_, "memra_ggml_peer_prepare", path);
        token_ = symbol<memra_ggml_peer_token_fn>(handle_, "memra_ggml_peer_token", path);
        rows_ = symbol<memra_ggml_peer_rows_fn>(handle_, "memra_ggml_peer_rows", path);
        pause_ = symbol<memra_ggml_peer_pause_fn>(handle_, "memra_ggml_peer_pause", path);
        set_scales_ = symbol<memra_ggml_peer_set_scales_fn>(handle_, "memra_ggml_peer_set_scales", path);
        to_float_ = symbol<memra_ggml_peer_to_float_fn>(handle_, "memra_ggml_peer_to_float", path);
        from_float_ = symbol<memra_ggml_peer_from_float_fn>(handle_, "memra_ggml_peer_from_float", path);
        vec_dot_ = symbol<memra_ggml_peer_vec_dot_fn>(handle_, "memra_ggml_peer_vec_dot", path);
        char error[1024] = "";
        peer_ = open(error, sizeof error);
        if (!peer_) throw PeerUnavailable(std::string("ggml peer: ") + error);
        describe_.assign(describe(peer_, nullptr, 0) + 1, '\0');
        describe_.resize(describe(peer_, describe_.data(), describe_.size()));
        avx2_ = has_feature_(peer_, "AVX2") != 0;
    } catch (...) {
        if (peer_) close_(peer_);
        dlclose(handle_);
        throw;
    }
}

GgmlPeer::~GgmlPeer() {
    close_(peer_);  // frees ggml's thread pools and buffers
    // The module (and the libggml it pulled in, with the CPU variant ggml's registry loaded)
    // stays mapped until exit: ggml does not promise that its registry survives being unloaded.
}

std::string GgmlPeer::prepare(const WeightStore &store, bool hugepages) {
    memra_ggml_peer_weights w{};
    w.qtype = store.qtype();
    w.n_embd = store.shape().n_embd;
    w.n_ff = store.shape().n_ff;
    w.n_expert = store.count();
    w.gate = store.gate();
    w.up = store.up();
    w.down = store.down();
    w.base = store.data();
    w.size = store.size();
    w.hugepages = hugepages;
    return prepare(w);
}

std::string GgmlPeer::prepare(const memra_ggml_peer_weights &w) {
    char repacked[256] = "", error[1024] = "";
    check(prepare_(peer_, &w, repacked, sizeof repacked, error, sizeof error), "prepare", error);
    repacked_ = repacked[0] != '\0';
    return repacked;
}

void GgmlPeer::token(int32_t layout, const std::vector<int32_t> &ids, const std::vector<float> &route_weights,
                     const float *input, float *output, int32_t threads) const {
    char error[1024] = "";
    check(token_(peer_, layout, ids.data(), route_weights.data(), int32_t(ids.size()), input, output, threads, error,
                 sizeof error),
          "token step", error);
}

void GgmlPeer::rows(int32_t layout, int32_t expert, const float *inputs, int32_t rows, const float *route_weights,
                    float *outputs, int32_t threads) const {
    char error[1024] = "";
    check(rows_(peer_, layout, expert, inputs, rows, route_weights, outputs, threads, error, sizeof error),
          "rows step", error);
}

std::string GgmlPeer::variant() const {
    const std::string key = "CPU variant ";
    const size_t at = describe_.find(key);
    if (at == std::string::npos) return "unknown";
    const size_t from = at + key.size();
    return describe_.substr(from, describe_.find(' ', from) - from);
}

void GgmlPeer::pause() const { pause_(peer_); }

bool GgmlPeer::has_feature(const std::string &name) const { return has_feature_(peer_, name.c_str()) != 0; }

void GgmlPeer::set_scales(float gate, float up, float down) {
    char error[1024] = "";
    check(set_scales_(peer_, gate, up, down, error, sizeof error), "set_scales", error);
}

void GgmlPeer::to_float(int32_t qtype, const void *src, float *dst, int64_t n) const {
    char error[1024] = "";
    check(to_float_(peer_, qtype, src, dst, n, error, sizeof error), "to_float", error);
}

void GgmlPeer::from_float(int32_t qtype, const float *src, void *dst, int64_t n) const {
    char error[1024] = "";
    check(from_float_(peer_, qtype, src, dst, n, error, sizeof error), "from_float", error);
}

float GgmlPeer::vec_dot(int32_t qtype, int64_t n, const void *row, const void *act, int32_t *act_type) const {
    char error[1024] = "";
    float result = 0;
    check(vec_dot_(peer_, qtype, n, row, act, &result, act_type, error, sizeof error), "vec_dot", error);
    return result;
}

}  // namespace memra::bench
