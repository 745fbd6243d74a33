// Fuzzer of the GGUF reader the tools use (tools/gguf_format, memra::gguf::parse): any bytes as a
// file image. parse() either throws ParseError or returns a model whose every claim about the
// image holds. libFuzzer hands over an exact-size heap copy, so AddressSanitizer reports any read
// past the image. Properties on success, checked independently of the reader:
//  - the data section starts inside the image, on the file's alignment (a power of two), or at
//    its end for a file without tensors;
//  - every tensor of a known type has its bytes inside the data section (no overflow);
//  - every accessor (find_value, find_tensor, architecture, summary, as_uint, elements, rows)
//    works on what was returned.
#include <stdexcept>

#include "fuzz_util.h"
#include "gguf_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using namespace memra;
    gguf::Model m;
    try {
        m = gguf::parse(data, size);
    } catch (const gguf::ParseError &) {
        return 0;  // the expected answer to bad bytes
    }
    fuzz::check(m.file_size == size, "file_size is not the image's size");
    fuzz::check(m.alignment != 0 && (m.alignment & (m.alignment - 1)) == 0, "alignment not a power of two");
    // A metadata-only file may end without the padding; its (empty) data section is at the end.
    fuzz::check(m.data_offset <= size && (m.data_offset % m.alignment == 0 ||
                                          (m.tensors.empty() && m.data_offset == size)),
                "data section outside the image or unaligned");
    for (const gguf::KeyValue &kv : m.kvs) {
        fuzz::check(m.find_value(kv.key) == &kv.value, "find_value misses a key");
        (void)kv.value.summary();
        (void)kv.value.as_uint();
    }
    (void)m.architecture();
    for (const gguf::TensorInfo &t : m.tensors) {
        fuzz::check(m.find_tensor(t.name) != nullptr, "find_tensor misses a tensor");
        fuzz::check(!t.dims.empty(), "a tensor without dimensions");
        (void)t.elements();
        (void)t.rows();
        if (!t.bytes) continue;
        uint64_t end = 0;
        fuzz::check(!__builtin_add_overflow(m.data_offset, t.offset, &end) &&
                        !__builtin_add_overflow(end, *t.bytes, &end) && end <= size,
                    "a tensor's bytes lie outside the image");
    }
    return 0;
}
