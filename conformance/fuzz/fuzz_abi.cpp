// Fuzzer of the three ABI entry points that take descriptors: memra_cpu_moe_token_v2,
// memra_cpu_expert_rows_v2 and memra_cpu_expert_prefetch_v2, called through the shared library
// exactly as the engine calls them. Every descriptor field comes from the fuzz input: qtypes
// (valid or any int32), shapes, row_bytes and byte_len (right, off by a little, or anything), the
// scale and route weight (NaN, inf), the weights' source (memory; a memfd holding fuzz bytes, too
// short or long enough, at any offset; an fd number that is not open; a directory; a pipe),
// threads, count, rows, NULL pointers and error_len.
//
// What the contract trusts stays true: `weights` points at byte_len bytes we own whenever the
// descriptor is consistent (a caller lying about byte_len can make any library read out of bounds).
// When it is not, the buffer holds min(byte_len, 1 MiB) bytes: validation must refuse it before
// reading. With file_fd >= 0, `weights` points at one byte (the contract says it is not read).
// All buffers are exact-size heap blocks, so AddressSanitizer reports any access past them.
//
// Properties, against an independent model of CONTRACT.md's validation rules (valid_projection):
//  - the status is 1 or 2 for an invalid call, 3 for a valid one whose file cannot be read,
//    0 otherwise (prefetch: 0 or 3 when valid, as its reads happen later);
//  - on failure the message is NUL-terminated within error_len, not empty, and nothing outside
//    the error buffer is written: outputs equal their copies taken before the call;
//  - after any failure, a valid call still succeeds.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <memory>
#include <vector>

#include "fuzz_util.h"
#include "memra/cpu_experts.h"
#include "memra/qtypes.h"

namespace memra::fuzz {
namespace {

// The largest valid projection below: F32, 512 x 512 (make_shape). A cap below it (256 KiB
// until the first multi-core run) gave a consistent descriptor a short buffer, and the kernels
// rightly read all of it: a harness bug that ASan reported as the library's.
constexpr size_t kMaxBuffer = size_t(512) * 512 * 4;

// Everything one call's descriptors point at, released after the call.
class Owned {
public:
    ~Owned() {
        for (int fd : fds_) close(fd);
    }
    // An exact-size heap block (at least one byte) filled from the fuzz bytes.
    uint8_t *buffer(size_t n, ByteCycle &bytes) {
        auto &b = buffers_.emplace_back(std::make_unique<uint8_t[]>(n == 0 ? 1 : n));
        bytes.fill(b.get(), n == 0 ? 1 : n);
        return b.get();
    }
    int keep(int fd) {
        if (fd >= 0) fds_.push_back(fd);
        return fd;
    }

private:
    std::vector<std::unique_ptr<uint8_t[]>> buffers_;
    std::vector<int> fds_;
};

// CONTRACT.md, "Validation", for one projection.
bool valid_projection(const CpuProjectionV2 &p) {
    const memra_qtype_info *q = memra_qtype_find(p.qtype);
    if (!q || p.in_features < 1 || p.out_features < 1 || p.in_features % q->block_elems != 0)
        return false;
    size_t len = 0;
    return p.row_bytes == size_t(p.in_features / q->block_elems) * size_t(q->block_bytes) &&
           !__builtin_mul_overflow(p.row_bytes, size_t(p.out_features), &len) && p.byte_len == len &&
           (p.file_fd >= 0 || p.weights != nullptr) && std::isfinite(p.scale);
}

bool valid_expert(const CpuExpertV2 &e) {
    return valid_projection(e.gate) && valid_projection(e.up) && valid_projection(e.down) &&
           e.up.in_features == e.gate.in_features && e.up.out_features == e.gate.out_features &&
           e.down.in_features == e.gate.out_features;
}

float fuzz_scale(FuzzedDataProvider &fdp, bool special) {
    if (special) return fdp.PickValueInArray({NAN, INFINITY, -INFINITY});
    const float sign = fdp.ConsumeBool() ? 1.0f : -1.0f;  // (argument order is unspecified)
    return std::ldexp(sign, fdp.ConsumeIntegralInRange(-3, 3));
}

// Where a projection's bytes come from; sets *unreadable when a valid descriptor's read must fail.
void choose_source(FuzzedDataProvider &fdp, ByteCycle &bytes, Owned &owned, CpuProjectionV2 &p,
                   bool *unreadable) {
    enum { kMemory, kMemfd, kClosedFd, kDirectory, kPipe, kNullWeights };
    const int source = fdp.PickValueInArray({kMemory, kMemory, kMemory, kMemory, kMemfd, kMemfd,
                                             kClosedFd, kDirectory, kPipe, kNullWeights});
    p.file_fd = -1 - fdp.ConsumeIntegralInRange(0, 2);  // any negative fd means memory
    if (source == kMemory) {
        p.weights = owned.buffer(std::min(p.byte_len, kMaxBuffer), bytes);
        return;
    }
    if (source == kNullWeights) return;
    p.weights = fdp.ConsumeBool() ? nullptr : owned.buffer(1, bytes);  // not read for a file
    *unreadable = true;
    if (source == kDirectory) {
        p.file_fd = owned.keep(open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    } else if (source == kPipe) {
        int ends[2];
        if (pipe2(ends, O_CLOEXEC) != 0) violated("pipe2");
        owned.keep(ends[1]);
        p.file_fd = owned.keep(ends[0]);
    } else if (source == kClosedFd) {
        p.file_fd = fdp.PickValueInArray({1000, 4095, INT_MAX});
        if (fcntl(p.file_fd, F_GETFD) != -1) violated("the 'closed' fd number is open");
    } else {
        // A memfd of the fuzz bytes: offset near 0 or near 2^64 (offset + length overflows), and
        // a file that ends before, exactly at, or after the projection's last byte.
        const int fd = owned.keep(memfd_create("memra-fuzz", MFD_CLOEXEC));
        if (fd < 0) violated("memfd_create");
        p.file_fd = fd;
        p.file_offset = fdp.ConsumeBool() ? fdp.ConsumeIntegralInRange<uint64_t>(0, 4096)
                                          : UINT64_MAX - fdp.ConsumeIntegralInRange<uint64_t>(0, 4096);
        if (p.file_offset > 4096 || p.byte_len > kMaxBuffer) return;  // unreadable (or invalid)
        const int64_t slack = fdp.ConsumeIntegralInRange<int64_t>(-2, 2);
        const int64_t size = std::max<int64_t>(0, int64_t(p.file_offset + p.byte_len) + slack);
        std::vector<uint8_t> content(static_cast<size_t>(size));
        bytes.fill(content.data(), content.size());
        if (write(fd, content.data(), content.size()) != ssize_t(content.size())) violated("write memfd");
        *unreadable = slack < 0;
    }
}

CpuProjectionV2 make_projection(FuzzedDataProvider &fdp, ByteCycle &bytes, Owned &owned,
                                int32_t in, int32_t out, bool *unreadable) {
    // One mutation at most per projection, so that each invalid field is met on its own too.
    const uint8_t mutation = fdp.ConsumeIntegralInRange<uint8_t>(0, 31);
    CpuProjectionV2 p{};
    p.qtype = mutation == 1 ? fdp.ConsumeIntegral<int32_t>()
                            : memra_qtype_table[fdp.ConsumeIntegralInRange(0, MEMRA_QTYPE_COUNT - 1)].id;
    p.in_features = mutation == 2 ? fdp.ConsumeIntegralInRange<int32_t>(-2, 600) : in;
    p.out_features = mutation == 3 ? fdp.ConsumeIntegralInRange<int32_t>(-2, 70) : out;
    // What a correct caller computes (and garbage for what it cannot).
    if (const memra_qtype_info *q = memra_qtype_find(p.qtype))
        p.row_bytes = size_t(p.in_features / q->block_elems) * size_t(q->block_bytes);
    if (mutation == 4) p.row_bytes += size_t(fdp.ConsumeIntegralInRange<int64_t>(-3, 3));
    if (mutation == 5) p.row_bytes = fdp.ConsumeIntegral<size_t>();
    p.byte_len = p.row_bytes * size_t(p.out_features);  // wraps as a C caller's would
    if (mutation == 6) p.byte_len += size_t(fdp.ConsumeIntegralInRange<int64_t>(-3, 3));
    if (mutation == 7) p.byte_len = fdp.ConsumeIntegral<size_t>();
    p.scale = fuzz_scale(fdp, mutation == 8);
    bool file_unreadable = false;
    choose_source(fdp, bytes, owned, p, &file_unreadable);
    // Only a valid descriptor's read is attempted.
    if (valid_projection(p) && file_unreadable) *unreadable = true;
    return p;
}

// Shapes that chain when nothing is mutated: input n_in, hidden n_ff, output n_out.
struct Shape {
    int32_t n_in, n_ff, n_out;
};

Shape make_shape(FuzzedDataProvider &fdp) {
    return {fdp.PickValueInArray({32, 64, 256, 256, 512}), fdp.PickValueInArray({32, 64, 256, 256, 512}),
            fdp.ConsumeIntegralInRange<int32_t>(1, 40)};
}

CpuExpertV2 make_expert(FuzzedDataProvider &fdp, ByteCycle &bytes, Owned &owned, const Shape &s,
                        bool *unreadable) {
    CpuExpertV2 e{};
    e.gate = make_projection(fdp, bytes, owned, s.n_in, s.n_ff, unreadable);
    e.up = make_projection(fdp, bytes, owned, s.n_in, s.n_ff, unreadable);
    e.down = make_projection(fdp, bytes, owned, s.n_ff, s.n_out, unreadable);
    e.route_weight = fdp.ConsumeIntegralInRange(0, 15) == 0 ? NAN : fuzz_scale(fdp, false);
    return e;
}

int32_t fuzz_threads(FuzzedDataProvider &fdp) {
    return fdp.PickValueInArray({1, 1, 2, 2, 3, 0, -1, 64, INT_MAX});
}

// A caller's float buffer of exactly n values (at least one), filled from the fuzz bytes.
std::vector<float> floats(size_t n, ByteCycle &bytes, FloatMode mode) {
    std::vector<float> v(std::max<size_t>(n, 1));
    for (float &x : v) x = next_float(bytes, mode, 0);
    return v;
}

// The error buffer a caller passes: NULL, or exactly error_len bytes (one when error_len is 0).
struct ErrorBuffer {
    explicit ErrorBuffer(FuzzedDataProvider &fdp)
        : len(fdp.PickValueInArray<size_t>({0, 1, 2, 5, 40, 300})),
          bytes(std::max<size_t>(len, 1), 0x5A), null(fdp.ConsumeIntegralInRange(0, 7) == 0) {}
    char *ptr() { return null ? nullptr : bytes.data(); }
    void check_after(int32_t status) const {
        check(status >= 0 && status <= 6, "status outside 0..6");
        if (null) return;
        if (len == 0) {
            check(bytes[0] == 0x5A, "error written with error_len 0");
            return;
        }
        if (status == MEMRA_STATUS_OK) return;
        check(std::memchr(bytes.data(), 0, len) != nullptr, "error message not NUL-terminated within error_len");
        if (len > 1) check(bytes[0] != '\0', "empty error message");
    }
    size_t len;
    std::vector<char> bytes;
    bool null;
};

// MEMRA_FUZZ_TRACE=1: one line per call (to see what a seed or a crash input decodes to).
void trace(const char *entry, int32_t status, const ErrorBuffer &error) {
    static const bool on = std::getenv("MEMRA_FUZZ_TRACE") != nullptr;
    if (on)
        std::fprintf(stderr, "%s: status %d%s%.*s\n", entry, status, status ? ": " : "",
                     status && !error.null ? int(error.len) : 0, error.bytes.data());
}

void check_status(int32_t status, bool invalid, bool unreadable, bool reads_now) {
    if (invalid)
        check(status == MEMRA_STATUS_INVALID_ARGUMENT || status == MEMRA_STATUS_UNSUPPORTED_QTYPE,
              "an invalid call did not fail with status 1 or 2");
    else if (unreadable && reads_now)
        check(status == MEMRA_STATUS_IO_ERROR, "a valid call with an unreadable file did not fail with 3");
    else if (reads_now)
        check(status == MEMRA_STATUS_OK, "a valid call failed");
    else
        check(status == MEMRA_STATUS_OK || status == MEMRA_STATUS_IO_ERROR, "a valid prefetch failed");
}

// Every property of one call's outcome; `before` and `after` are its output buffer (empty for
// prefetch), which a failed call must leave as it was.
void check_outcome(const char *entry, int32_t status, const ErrorBuffer &error, bool invalid,
                   bool unreadable, bool reads_now, const std::vector<float> &before,
                   const std::vector<float> &after) {
    trace(entry, status, error);
    error.check_after(status);
    check_status(status, invalid, unreadable, reads_now);
    if (status != MEMRA_STATUS_OK && !after.empty())
        check(std::memcmp(before.data(), after.data(), after.size() * sizeof(float)) == 0,
              "output changed by a failed call");
}

// One F32 expert of 1 x 1 matrices: the library must still compute after any failure.
void check_still_usable() {
    static const float one = 1.0f;
    CpuProjectionV2 p{};
    p.weights = reinterpret_cast<const uint8_t *>(&one);
    p.qtype = MEMRA_QTYPE_F32;
    p.in_features = p.out_features = 1;
    p.row_bytes = p.byte_len = 4;
    p.file_fd = -1;
    p.scale = 1.0f;
    const CpuExpertV2 e{p, p, p, 1.0f};
    float in = 1.0f, out = 0.0f;
    check(memra_cpu_moe_token_v2(&e, 1, &in, &out, 1, nullptr, 0) == MEMRA_STATUS_OK,
          "the library failed a valid call after a failure");
}

void fuzz_token(FuzzedDataProvider &fdp, ByteCycle &bytes, Owned &owned, FloatMode mode) {
    const Shape s = make_shape(fdp);
    const int32_t count = fdp.ConsumeIntegralInRange(0, 15) == 0 ? fdp.ConsumeIntegralInRange(-1, 0)
                                                                 : fdp.ConsumeIntegralInRange(1, 4);
    bool unreadable = false;
    std::vector<CpuExpertV2> experts(size_t(std::max(count, 1)));
    for (CpuExpertV2 &e : experts) e = make_expert(fdp, bytes, owned, s, &unreadable);
    bool invalid = count < 1;
    for (const CpuExpertV2 &e : experts)
        invalid = invalid || !valid_expert(e) || !std::isfinite(e.route_weight) ||
                  e.gate.in_features != experts[0].gate.in_features ||
                  e.down.out_features != experts[0].down.out_features;
    const int32_t threads = fuzz_threads(fdp);
    invalid = invalid || threads < 1;
    // Buffers as long as expert 0 says the input and output are.
    std::vector<float> input = floats(size_t(std::max(experts[0].gate.in_features, 1)), bytes, mode);
    std::vector<float> output = floats(size_t(std::max(experts[0].down.out_features, 1)), bytes, mode);
    const std::vector<float> before = output;
    const uint8_t nulls = fdp.ConsumeIntegralInRange<uint8_t>(0, 15);
    invalid = invalid || nulls < 3;
    ErrorBuffer error(fdp);
    const int32_t status = memra_cpu_moe_token_v2(nulls == 0 ? nullptr : experts.data(), count,
                                                  nulls == 1 ? nullptr : input.data(),
                                                  nulls == 2 ? nullptr : output.data(), threads,
                                                  error.ptr(), error.len);
    check_outcome("token", status, error, invalid, unreadable, true, before, output);
}

void fuzz_rows(FuzzedDataProvider &fdp, ByteCycle &bytes, Owned &owned, FloatMode mode) {
    const Shape s = make_shape(fdp);
    bool unreadable = false;
    const CpuExpertV2 expert = make_expert(fdp, bytes, owned, s, &unreadable);
    const int32_t rows = fdp.ConsumeIntegralInRange(0, 15) == 0 ? fdp.PickValueInArray({-1, 0, 65, INT_MAX})
                                                                : fdp.ConsumeIntegralInRange(1, 64);
    const int32_t threads = fuzz_threads(fdp);
    const size_t r = size_t(std::clamp(rows, 1, 64));
    std::vector<float> inputs = floats(r * size_t(std::max(expert.gate.in_features, 1)), bytes, mode);
    std::vector<float> route = floats(r, bytes, mode);  // any values: not validated by the contract
    std::vector<float> outputs = floats(r * size_t(std::max(expert.down.out_features, 1)), bytes, mode);
    const std::vector<float> before = outputs;
    const uint8_t nulls = fdp.ConsumeIntegralInRange<uint8_t>(0, 15);
    const bool invalid = !valid_expert(expert) || rows < 1 || rows > 64 || threads < 1 || nulls < 4;
    ErrorBuffer error(fdp);
    const int32_t status = memra_cpu_expert_rows_v2(
        nulls == 0 ? nullptr : &expert, nulls == 1 ? nullptr : inputs.data(), rows,
        nulls == 2 ? nullptr : route.data(), nulls == 3 ? nullptr : outputs.data(), threads,
        error.ptr(), error.len);
    check_outcome("rows", status, error, invalid, unreadable, true, before, outputs);
}

void fuzz_prefetch(FuzzedDataProvider &fdp, ByteCycle &bytes, Owned &owned) {
    const Shape s = make_shape(fdp);
    const int32_t count = fdp.ConsumeIntegralInRange(-1, 6);
    bool unreadable = false;
    std::vector<CpuProjectionV2> projections(size_t(std::max(count, 1)));
    for (CpuProjectionV2 &p : projections) p = make_projection(fdp, bytes, owned, s.n_in, s.n_ff, &unreadable);
    bool invalid = count < 1;
    for (const CpuProjectionV2 &p : projections) invalid = invalid || !valid_projection(p);
    const bool null = fdp.ConsumeIntegralInRange(0, 15) == 0;
    ErrorBuffer error(fdp);
    const int32_t status = memra_cpu_expert_prefetch_v2(null ? nullptr : projections.data(), count,
                                                        error.ptr(), error.len);
    check_outcome("prefetch", status, error, invalid || null, unreadable, false, {}, {});
}

}  // namespace
}  // namespace memra::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using namespace memra::fuzz;
    FuzzedDataProvider fdp(data, size);
    const int entry = fdp.ConsumeIntegralInRange(0, 2);
    const FloatMode mode = FloatMode(fdp.ConsumeIntegralInRange<uint8_t>(0, 2));
    // The descriptor fields come from the front of the input, the bytes from a separate pool, so
    // that a mutation of a field does not shift every weight byte.
    ByteCycle bytes(fdp.ConsumeBytes<uint8_t>(fdp.ConsumeIntegralInRange<size_t>(0, 512)));
    Owned owned;
    if (entry == 0) fuzz_token(fdp, bytes, owned, mode);
    if (entry == 1) fuzz_rows(fdp, bytes, owned, mode);
    if (entry == 2) fuzz_prefetch(fdp, bytes, owned);
    check_still_usable();
    return 0;
}
