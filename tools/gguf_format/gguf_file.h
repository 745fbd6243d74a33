// A GGUF file on disk: mapped read-only and parsed, so that tensor bytes can be used in place.
#pragma once

#include <cstdint>
#include <string>

#include "gguf_model.h"

namespace memra::gguf {

class File {
public:
    // Maps and parses path. Throws ParseError (with the path in the message) for an unreadable
    // or malformed file.
    explicit File(const std::string &path);
    ~File();
    File(const File &) = delete;
    File &operator=(const File &) = delete;

    const Model &model() const { return model_; }
    const std::string &path() const { return path_; }
    // The first byte of a tensor's data (the parser checked it lies inside the mapping).
    const uint8_t *tensor_data(const TensorInfo &t) const { return bytes_ + model_.data_offset + t.offset; }
    // The absolute file offset of a tensor's data.
    uint64_t tensor_file_offset(const TensorInfo &t) const { return model_.data_offset + t.offset; }

private:
    std::string path_;
    const uint8_t *bytes_ = nullptr;
    size_t size_ = 0;
    Model model_;
};

}  // namespace memra::gguf
