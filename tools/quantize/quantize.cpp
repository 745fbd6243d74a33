#include "quantize.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "block_encoders.h"
#include "memra/cpu_experts.h"
#include "memra/qtypes.h"

namespace memra::quantize {
namespace {

using BlockEncoder = void (*)(const float *, uint8_t *);

// encode_<name> of every MEMRA_FORMAT_LIST row.
BlockEncoder block_encoder(int32_t qtype) {
    switch (qtype) {
#define MEMRA_ENCODER_CASE_(name, NAME, id, elems, bytes, act) \
    case id: return encode_##name;
        MEMRA_FORMAT_LIST(MEMRA_ENCODER_CASE_)
#undef MEMRA_ENCODER_CASE_
    default: return nullptr;
    }
}

const memra_qtype_info &info_of(int32_t qtype, int64_t n) {
    const memra_qtype_info *info = memra_qtype_find(qtype);
    if (!info) throw std::invalid_argument("no encoder for ggml type " + std::to_string(qtype));
    if (n < 1 || n % info->block_elems != 0)
        throw std::invalid_argument(std::string(info->name) + ": row length " + std::to_string(n) +
                                    " is not a positive multiple of " + std::to_string(info->block_elems));
    return *info;
}

}  // namespace

bool has_encoder(int32_t qtype) { return memra_qtype_find(qtype) != nullptr; }

size_t row_bytes(int32_t qtype, int64_t n) {
    const memra_qtype_info &info = info_of(qtype, n);
    return size_t(n / info.block_elems) * size_t(info.block_bytes);
}

void quantize_row(int32_t qtype, const float *x, int64_t n, uint8_t *out) {
    const memra_qtype_info &info = info_of(qtype, n);
    if (qtype == MEMRA_QTYPE_F32) {  // F32: the values themselves, at once
        std::memcpy(out, x, size_t(n) * sizeof(float));
        return;
    }
    const BlockEncoder encode = block_encoder(qtype);
    for (int64_t b = 0; b < n / info.block_elems; ++b) encode(x + b * info.block_elems, out + b * info.block_bytes);
}

std::vector<uint8_t> quantize_rows(int32_t qtype, const float *x, int64_t rows, int64_t n) {
    const size_t rb = row_bytes(qtype, n);
    std::vector<uint8_t> out(rb * size_t(rows));
    for (int64_t r = 0; r < rows; ++r) quantize_row(qtype, x + r * n, n, out.data() + size_t(r) * rb);
    return out;
}

}  // namespace memra::quantize
