#include "gguf_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace memra::gguf {
namespace {

template <class T>
void put(std::vector<uint8_t> &out, T v) {
    const size_t at = out.size();
    out.resize(at + sizeof v);
    std::memcpy(&out[at], &v, sizeof v);
}

void put_string(std::vector<uint8_t> &out, const std::string &s) {
    put<uint64_t>(out, s.size());
    out.insert(out.end(), s.begin(), s.end());
}

uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

}  // namespace

Writer::Writer(uint32_t alignment) : alignment_(alignment) {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
        throw std::invalid_argument("GGUF alignment " + std::to_string(alignment) + " is not a power of two");
    // Written even at the default, so that readers see the rule explicitly.
    add_u32("general.alignment", alignment);
}

void Writer::add_kv(const std::string &key, ValueType type, const std::vector<uint8_t> &payload) {
    put_string(kv_bytes_, key);
    put<uint32_t>(kv_bytes_, uint32_t(type));
    kv_bytes_.insert(kv_bytes_.end(), payload.begin(), payload.end());
    ++kv_count_;
}

void Writer::add_string(const std::string &key, const std::string &value) {
    std::vector<uint8_t> p;
    put_string(p, value);
    add_kv(key, ValueType::STRING, p);
}

void Writer::add_u32(const std::string &key, uint32_t value) {
    std::vector<uint8_t> p;
    put<uint32_t>(p, value);
    add_kv(key, ValueType::UINT32, p);
}

void Writer::add_u64(const std::string &key, uint64_t value) {
    std::vector<uint8_t> p;
    put<uint64_t>(p, value);
    add_kv(key, ValueType::UINT64, p);
}

void Writer::add_f32(const std::string &key, float value) {
    std::vector<uint8_t> p;
    put<float>(p, value);
    add_kv(key, ValueType::FLOAT32, p);
}

size_t Writer::add_tensor(const std::string &name, uint32_t type, const std::vector<uint64_t> &dims) {
    const auto info = tensor_type_info(type);
    if (!info) throw std::invalid_argument("tensor '" + name + "': unknown type " + std::to_string(type));
    if (dims.empty() || dims.size() > kMaxDims || dims[0] % info->block_elems != 0)
        throw std::invalid_argument("tensor '" + name + "': bad shape for " + info->name);
    TensorInfo t;
    t.name = name;
    t.type = type;
    t.dims = dims;
    t.offset = data_size_;
    t.bytes = t.elements() / info->block_elems * info->block_bytes;
    data_size_ = align_up(data_size_ + *t.bytes, alignment_);
    tensors_.push_back(std::move(t));
    return tensors_.size() - 1;
}

void Writer::write_data(const std::function<void(size_t, const Sink &)> &fill, const Sink &write_bytes) const {
    static const uint8_t kZeros[64] = {};
    for (size_t k = 0; k < tensors_.size(); ++k) {
        uint64_t written = 0;
        fill(k, [&](const void *p, size_t n) {
            written += n;
            if (written > *tensors_[k].bytes)
                throw std::logic_error("tensor '" + tensors_[k].name + "': more data than its size");
            write_bytes(p, n);
        });
        if (written != *tensors_[k].bytes)
            throw std::logic_error("tensor '" + tensors_[k].name + "': " + std::to_string(written) + " bytes written, " +
                                   std::to_string(*tensors_[k].bytes) + " expected");
        for (uint64_t pad = align_up(written, alignment_) - written; pad > 0;) {
            const size_t n = size_t(std::min<uint64_t>(pad, sizeof kZeros));
            write_bytes(kZeros, n);
            pad -= n;
        }
    }
}

void Writer::write(const std::string &path, const std::function<void(size_t, const Sink &)> &fill) const {
    std::vector<uint8_t> head;
    put<uint32_t>(head, kMagic);
    put<uint32_t>(head, kVersion);
    put<uint64_t>(head, tensors_.size());
    put<uint64_t>(head, kv_count_);
    head.insert(head.end(), kv_bytes_.begin(), kv_bytes_.end());
    for (const TensorInfo &t : tensors_) {
        put_string(head, t.name);
        put<uint32_t>(head, uint32_t(t.dims.size()));
        for (uint64_t d : t.dims) put<uint64_t>(head, d);
        put<uint32_t>(head, t.type);
        put<uint64_t>(head, t.offset);
    }
    head.resize(align_up(head.size(), alignment_), 0);

    std::unique_ptr<FILE, int (*)(FILE *)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
    if (!f) throw std::runtime_error(path + ": " + std::strerror(errno));
    auto write_bytes = [&](const void *p, size_t n) {
        if (n && std::fwrite(p, 1, n, f.get()) != n) throw std::runtime_error(path + ": write: " + std::strerror(errno));
    };
    try {
        write_bytes(head.data(), head.size());
        write_data(fill, write_bytes);
    } catch (...) {
        f.reset();
        std::remove(path.c_str());  // no half-written file that looks like a model
        throw;
    }
    if (std::fclose(f.release()) != 0) throw std::runtime_error(path + ": close: " + std::strerror(errno));
}

}  // namespace memra::gguf
