// The bounds-checked GGUF parser. Every read goes through Cursor, which knows how many bytes
// remain; every count read from the file is checked against the bytes that could hold it before
// anything is allocated for it, so a garbage count fails fast instead of exhausting memory.
#include <algorithm>
#include <cstring>
#include <set>
#include <sstream>

#include "gguf_model.h"

namespace memra::gguf {
namespace {

// Nested arrays are legal GGUF but no real model uses them beyond one level; the limit keeps a
// crafted file from recursing deep.
constexpr int kMaxArrayDepth = 4;

class Cursor {
public:
    Cursor(const uint8_t *data, size_t size) : data_(data), size_(size) {}

    size_t pos() const { return pos_; }
    size_t remaining() const { return size_ - pos_; }

    template <class T>
    T read(const char *what) {
        need(sizeof(T), what);
        T v;
        std::memcpy(&v, data_ + pos_, sizeof v);
        pos_ += sizeof v;
        return v;
    }

    std::string read_string(const char *what) {
        const uint64_t len = read<uint64_t>(what);
        if (len > remaining())
            fail(std::string("truncated or corrupt file: ") + what + ": string length " + std::to_string(len) + " exceeds the " +
                 std::to_string(remaining()) + " bytes left in the file");
        std::string s(reinterpret_cast<const char *>(data_ + pos_), size_t(len));
        pos_ += size_t(len);
        return s;
    }

    [[noreturn]] void fail(const std::string &msg) const {
        throw ParseError("at byte " + std::to_string(pos_) + ": " + msg);
    }

private:
    void need(size_t n, const char *what) const {
        if (n > remaining())
            fail(std::string("truncated file: ") + what + " needs " + std::to_string(n) +
                 " bytes, " + std::to_string(remaining()) + " left");
    }

    const uint8_t *data_;
    size_t size_;
    size_t pos_ = 0;
};

Value read_value(Cursor &c, uint32_t type, int depth);

Value read_array(Cursor &c, int depth) {
    Value v;
    v.type = ValueType::ARRAY;
    const uint32_t elem = c.read<uint32_t>("array element type");
    if (elem >= kValueTypeCount) c.fail("unknown array element type " + std::to_string(elem));
    if (elem == uint32_t(ValueType::ARRAY) && depth + 1 >= kMaxArrayDepth)
        c.fail("arrays nested deeper than " + std::to_string(kMaxArrayDepth));
    v.elem_type = ValueType(elem);
    v.count = c.read<uint64_t>("array length");
    // Each element takes at least its fixed size (strings and arrays at least their u64 length).
    const uint64_t min_size = value_type_size(elem) ? value_type_size(elem) : 8;
    if (v.count > c.remaining() / min_size)
        c.fail("truncated or corrupt file: array of " + std::to_string(v.count) + " " + value_type_name(elem) +
               " values cannot fit in the " + std::to_string(c.remaining()) + " bytes left");
    for (uint64_t k = 0; k < v.count; ++k) {
        Value e = read_value(c, elem, depth + 1);
        if (k < Value::kArrayHead) v.head.push_back(std::move(e));
    }
    return v;
}

Value read_value(Cursor &c, uint32_t type, int depth) {
    Value v;
    v.type = ValueType(type);
    switch (ValueType(type)) {
    case ValueType::UINT8: v.u = c.read<uint8_t>("uint8 value"); break;
    case ValueType::INT8: v.i = c.read<int8_t>("int8 value"); break;
    case ValueType::UINT16: v.u = c.read<uint16_t>("uint16 value"); break;
    case ValueType::INT16: v.i = c.read<int16_t>("int16 value"); break;
    case ValueType::UINT32: v.u = c.read<uint32_t>("uint32 value"); break;
    case ValueType::INT32: v.i = c.read<int32_t>("int32 value"); break;
    case ValueType::UINT64: v.u = c.read<uint64_t>("uint64 value"); break;
    case ValueType::INT64: v.i = c.read<int64_t>("int64 value"); break;
    case ValueType::FLOAT32: v.f = c.read<float>("float32 value"); break;
    case ValueType::FLOAT64: v.f = c.read<double>("float64 value"); break;
    case ValueType::BOOL: {
        const uint8_t b = c.read<uint8_t>("bool value");
        if (b > 1) c.fail("bool value " + std::to_string(b) + " is neither 0 nor 1");
        v.u = b;
        break;
    }
    case ValueType::STRING: v.s = c.read_string("string value"); break;
    case ValueType::ARRAY: return read_array(c, depth);
    default: c.fail("unknown value type " + std::to_string(type));
    }
    return v;
}

uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

// general.alignment must be a u32 power of two (ggml's rule); absent means 32.
uint64_t alignment_of(const Model &m) {
    const Value *v = m.find_value("general.alignment");
    if (!v) return kDefaultAlignment;
    if (v->type != ValueType::UINT32)
        throw ParseError("general.alignment has type " + value_type_name(uint32_t(v->type)) + ", expected uint32");
    if (v->u == 0 || (v->u & (v->u - 1)) != 0)
        throw ParseError("general.alignment " + std::to_string(v->u) + " is not a power of two");
    return v->u;
}

TensorInfo read_tensor_info(Cursor &c) {
    TensorInfo t;
    t.name = c.read_string("tensor name");
    const uint32_t n_dims = c.read<uint32_t>("tensor n_dims");
    if (n_dims < 1 || n_dims > kMaxDims)
        c.fail("tensor '" + t.name + "' has " + std::to_string(n_dims) + " dimensions (1.." +
               std::to_string(kMaxDims) + " allowed)");
    uint64_t elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
        const uint64_t ne = c.read<uint64_t>("tensor dimension");
        if (ne < 1 || ne > uint64_t(INT64_MAX) / elements)
            c.fail("tensor '" + t.name + "' dimension " + std::to_string(d) + " = " + std::to_string(ne) +
                   " is zero or overflows the element count");
        elements *= ne;
        t.dims.push_back(ne);
    }
    t.type = c.read<uint32_t>("tensor type");
    t.offset = c.read<uint64_t>("tensor data offset");
    if (const auto info = tensor_type_info(t.type)) {
        if (t.dims[0] % info->block_elems != 0)
            c.fail("tensor '" + t.name + "': row length " + std::to_string(t.dims[0]) +
                   " is not a multiple of " + info->name + "'s block of " + std::to_string(info->block_elems));
        const uint64_t blocks = elements / info->block_elems;
        if (blocks > UINT64_MAX / info->block_bytes) c.fail("tensor '" + t.name + "' byte size overflows");
        t.bytes = blocks * info->block_bytes;
    }
    return t;
}

// Each tensor's data must start aligned, lie inside the file, and not overlap another's.
void check_tensor_data(const Model &m) {
    const uint64_t data_bytes = m.file_size - m.data_offset;
    std::vector<const TensorInfo *> by_offset;
    for (const TensorInfo &t : m.tensors) {
        if (t.offset % m.alignment != 0)
            throw ParseError("tensor '" + t.name + "': data offset " + std::to_string(t.offset) +
                             " is not a multiple of the alignment " + std::to_string(m.alignment));
        if (!t.bytes) continue;
        if (t.offset > data_bytes || *t.bytes > data_bytes - t.offset)
            throw ParseError("truncated file: tensor '" + t.name + "' needs bytes [" + std::to_string(t.offset) +
                             ", " + std::to_string(t.offset + *t.bytes) + ") of the data section, which has " +
                             std::to_string(data_bytes));
        by_offset.push_back(&t);
    }
    std::sort(by_offset.begin(), by_offset.end(),
              [](const TensorInfo *a, const TensorInfo *b) { return a->offset < b->offset; });
    for (size_t k = 1; k < by_offset.size(); ++k) {
        const TensorInfo &prev = *by_offset[k - 1], &t = *by_offset[k];
        if (prev.offset + *prev.bytes > t.offset)
            throw ParseError("tensors '" + prev.name + "' and '" + t.name + "' overlap in the data section");
    }
}

}  // namespace

Model parse(const uint8_t *data, size_t size) {
    Cursor c(data, size);
    Model m;
    m.file_size = size;
    const uint32_t magic = c.read<uint32_t>("magic");
    if (magic != kMagic) throw ParseError("at byte 0: not a GGUF file (the magic is not \"GGUF\")");
    m.version = c.read<uint32_t>("version");
    if (m.version != 2 && m.version != 3)
        c.fail("GGUF version " + std::to_string(m.version) +
               (m.version > 0xFFFF ? " (a big-endian file?)" : "") + " is not supported (2 and 3 are)");
    const uint64_t n_tensors = c.read<uint64_t>("tensor count");
    const uint64_t n_kv = c.read<uint64_t>("metadata kv count");
    // Smallest encodings: a kv is a key length (8) and a type (4); a tensor info is a name
    // length, n_dims, one dimension, a type and an offset (8 + 4 + 8 + 4 + 8).
    if (n_kv > c.remaining() / 12) c.fail("truncated or corrupt file: " + std::to_string(n_kv) + " metadata kvs cannot fit in the " +
               std::to_string(c.remaining()) + " bytes left");
    if (n_tensors > c.remaining() / 32) c.fail("truncated or corrupt file: " + std::to_string(n_tensors) + " tensor infos cannot fit in the " +
               std::to_string(c.remaining()) + " bytes left");

    std::set<std::string> keys;
    for (uint64_t k = 0; k < n_kv; ++k) {
        KeyValue kv;
        kv.key = c.read_string("metadata key");
        if (!keys.insert(kv.key).second) c.fail("duplicate metadata key '" + kv.key + "'");
        const uint32_t type = c.read<uint32_t>("metadata value type");
        if (type >= kValueTypeCount) c.fail("key '" + kv.key + "': unknown value type " + std::to_string(type));
        kv.value = read_value(c, type, 0);
        m.kvs.push_back(std::move(kv));
    }
    m.alignment = alignment_of(m);

    std::set<std::string> names;
    for (uint64_t k = 0; k < n_tensors; ++k) {
        TensorInfo t = read_tensor_info(c);
        if (!names.insert(t.name).second) c.fail("duplicate tensor name '" + t.name + "'");
        m.tensors.push_back(std::move(t));
    }
    m.data_offset = align_up(c.pos(), m.alignment);
    if (m.data_offset > size) {
        if (!m.tensors.empty())
            throw ParseError("truncated file: the data section would start at byte " +
                             std::to_string(m.data_offset) + ", past the end (" + std::to_string(size) + ")");
        m.data_offset = size;  // metadata-only file without trailing padding
    }
    check_tensor_data(m);
    return m;
}

uint64_t TensorInfo::elements() const {
    uint64_t n = 1;
    for (uint64_t d : dims) n *= d;
    return n;
}

const Value *Model::find_value(const std::string &key) const {
    for (const KeyValue &kv : kvs)
        if (kv.key == key) return &kv.value;
    return nullptr;
}

const TensorInfo *Model::find_tensor(const std::string &name) const {
    for (const TensorInfo &t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

std::string Model::architecture() const {
    const Value *v = find_value("general.architecture");
    return v && v->type == ValueType::STRING ? v->s : "";
}

std::optional<uint64_t> Value::as_uint() const {
    switch (type) {
    case ValueType::UINT8: case ValueType::UINT16: case ValueType::UINT32: case ValueType::UINT64:
        return u;
    case ValueType::INT8: case ValueType::INT16: case ValueType::INT32: case ValueType::INT64:
        if (i >= 0) return uint64_t(i);
        return std::nullopt;
    default: return std::nullopt;
    }
}

namespace {

std::string quoted(const std::string &s) {
    constexpr size_t kMax = 60;
    std::string out = "\"";
    for (char ch : s.substr(0, kMax)) {
        const unsigned char c = static_cast<unsigned char>(ch);
        if (c == '"' || c == '\\') out += '\\';
        if (c < 0x20) {
            out += "\\x" + std::string(1, "0123456789abcdef"[c >> 4]) + "0123456789abcdef"[c & 15];
            continue;
        }
        out += ch;
    }
    out += s.size() > kMax ? "\"..." : "\"";
    return out;
}

}  // namespace

std::string Value::summary() const {
    std::ostringstream o;
    switch (type) {
    case ValueType::STRING: return quoted(s);
    case ValueType::BOOL: return u ? "true" : "false";
    case ValueType::FLOAT32: case ValueType::FLOAT64: o << f; return o.str();
    case ValueType::INT8: case ValueType::INT16: case ValueType::INT32: case ValueType::INT64: return std::to_string(i);
    case ValueType::ARRAY: {
        o << '[' << value_type_name(uint32_t(elem_type)) << " x " << count;
        for (size_t k = 0; k < head.size(); ++k) o << (k ? ", " : ": ") << head[k].summary();
        if (count > head.size()) o << ", ...";
        o << ']';
        return o.str();
    }
    default: return std::to_string(u);
    }
}

}  // namespace memra::gguf
