// Writes GGUF v3 files: metadata first, tensor infos with offsets laid out at the alignment, then
// each tensor's data streamed in order, so that a multi-gigabyte file never has to be in memory.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gguf_model.h"

namespace memra::gguf {

class Writer {
public:
    // general.alignment is written as the first kv whenever alignment is not the default.
    explicit Writer(uint32_t alignment = kDefaultAlignment);

    void add_string(const std::string &key, const std::string &value);
    void add_u32(const std::string &key, uint32_t value);
    void add_u64(const std::string &key, uint64_t value);
    void add_f32(const std::string &key, float value);
    // A tensor of a type the reader can size; dims in ggml order (dims[0] = row length).
    // Returns its index for the data callback.
    size_t add_tensor(const std::string &name, uint32_t type, const std::vector<uint64_t> &dims);

    // The tensors as they will be laid out (offsets relative to the data section).
    const std::vector<TensorInfo> &tensors() const { return tensors_; }

    // Writes the file. fill(index, out) must append exactly tensors()[index].bytes bytes through
    // out(bytes, n) (in as many calls as it likes). Throws std::runtime_error on I/O errors (and
    // passes on fill's exceptions); a file that could not be completed is removed.
    using Sink = std::function<void(const void *, size_t)>;
    void write(const std::string &path, const std::function<void(size_t, const Sink &)> &fill) const;

private:
    // Each tensor's data through fill, padded to the alignment, checked against its size.
    void write_data(const std::function<void(size_t, const Sink &)> &fill, const Sink &write_bytes) const;
    void add_kv(const std::string &key, ValueType type, const std::vector<uint8_t> &payload);

    uint32_t alignment_;
    std::vector<uint8_t> kv_bytes_;
    uint64_t kv_count_ = 0;
    std::vector<TensorInfo> tensors_;
    uint64_t data_size_ = 0;
};

}  // namespace memra::gguf
