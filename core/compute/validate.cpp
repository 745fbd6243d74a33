#include "compute/validate.h"

#include <cmath>
#include <string>

#include "compute/call_plan.h"
#include "error.h"
#include "memra/qtypes.h"

namespace memra {
namespace {

std::string supported_qtypes() {
    std::string s;
    for (const memra_qtype_info &q : memra_qtype_table)
        s += (s.empty() ? "" : ", ") + std::string(q.name) + "=" + std::to_string(q.id);
    return s;
}

[[noreturn]] void invalid(const std::string &where, const std::string &what) {
    fail(MEMRA_STATUS_INVALID_ARGUMENT, where + ": " + what);
}

void validate_expert_shapes(const CpuExpertV2 &e, const std::string &where) {
    if (e.up.in_features != e.gate.in_features)
        invalid(where, "up.in_features " + std::to_string(e.up.in_features) +
                           " != gate.in_features " + std::to_string(e.gate.in_features));
    if (e.up.out_features != e.gate.out_features)
        invalid(where, "up.out_features " + std::to_string(e.up.out_features) +
                           " != gate.out_features " + std::to_string(e.gate.out_features));
    if (e.down.in_features != e.gate.out_features)
        invalid(where, "down.in_features " + std::to_string(e.down.in_features) +
                           " != gate.out_features " + std::to_string(e.gate.out_features));
}

// `expert` < 0: the rows call's single expert (expert_label, call_plan.h).
void validate_expert(const CpuExpertV2 &e, int32_t expert) {
    const CpuProjectionV2 *projections[kProjectionKinds] = {&e.gate, &e.up, &e.down};
    for (int32_t k = 0; k < kProjectionKinds; ++k)
        validate_projection(*projections[k], expert_label(expert, projection_name(k)).c_str());
    validate_expert_shapes(e, expert_label(expert));
}

void validate_threads(int32_t threads) {
    if (threads < 1)
        fail(MEMRA_STATUS_INVALID_ARGUMENT, "threads " + std::to_string(threads) + " < 1");
}

}  // namespace

void validate_projection(const CpuProjectionV2 &p, const char *where_c) {
    const std::string where = where_c;
    const memra_qtype_info *q = memra_qtype_find(p.qtype);
    if (!q)
        fail(MEMRA_STATUS_UNSUPPORTED_QTYPE, where + ": qtype " + std::to_string(p.qtype) +
                                                 " is not supported (supported: " +
                                                 supported_qtypes() + ")");
    if (p.in_features < 1) invalid(where, "in_features " + std::to_string(p.in_features) + " < 1");
    if (p.out_features < 1)
        invalid(where, "out_features " + std::to_string(p.out_features) + " < 1");
    if (p.in_features % q->block_elems != 0)
        invalid(where, "in_features " + std::to_string(p.in_features) +
                           " is not a multiple of the " + q->name + " block size " +
                           std::to_string(q->block_elems));
    const size_t blocks = static_cast<size_t>(p.in_features / q->block_elems);
    const size_t want_row = blocks * static_cast<size_t>(q->block_bytes);
    if (p.row_bytes != want_row)
        invalid(where, "row_bytes " + std::to_string(p.row_bytes) + " != " +
                           std::to_string(blocks) + " blocks * " + std::to_string(q->block_bytes) +
                           " bytes = " + std::to_string(want_row) + " (" + q->name +
                           ", in_features " + std::to_string(p.in_features) + ")");
    size_t want_len = 0;
    if (__builtin_mul_overflow(p.row_bytes, static_cast<size_t>(p.out_features), &want_len))
        invalid(where, "row_bytes * out_features overflows");
    if (p.byte_len != want_len)
        invalid(where, "byte_len " + std::to_string(p.byte_len) + " != row_bytes " +
                           std::to_string(p.row_bytes) + " * out_features " +
                           std::to_string(p.out_features) + " = " + std::to_string(want_len));
    if (p.file_fd < 0 && p.weights == nullptr)
        invalid(where, "weights is NULL and file_fd is " + std::to_string(p.file_fd) +
                           " (no file either)");
    if (!std::isfinite(p.scale)) invalid(where, "scale " + std::to_string(p.scale) + " is not finite");
}

void validate_token_call(const CpuExpertV2 *experts, int32_t count, const float *input,
                         const float *output, int32_t threads) {
    if (count < 1) fail(MEMRA_STATUS_INVALID_ARGUMENT, "count " + std::to_string(count) + " < 1");
    if (!experts) fail(MEMRA_STATUS_INVALID_ARGUMENT, "experts is NULL");
    if (!input) fail(MEMRA_STATUS_INVALID_ARGUMENT, "input is NULL");
    if (!output) fail(MEMRA_STATUS_INVALID_ARGUMENT, "output is NULL");
    validate_threads(threads);
    for (int32_t i = 0; i < count; ++i) {
        const CpuExpertV2 &e = experts[i];
        const std::string where = expert_label(i);
        validate_expert(e, i);
        if (!std::isfinite(e.route_weight))
            invalid(where, "route_weight " + std::to_string(e.route_weight) + " is not finite");
        if (i == 0) continue;
        if (e.gate.in_features != experts[0].gate.in_features)
            invalid(where, "gate.in_features " + std::to_string(e.gate.in_features) +
                               " != expert 0's input length " +
                               std::to_string(experts[0].gate.in_features));
        if (e.down.out_features != experts[0].down.out_features)
            invalid(where, "down.out_features " + std::to_string(e.down.out_features) +
                               " != expert 0's down.out_features " +
                               std::to_string(experts[0].down.out_features));
    }
}

void validate_rows_call(const CpuExpertV2 *expert, const float *inputs, int32_t rows,
                        const float *route_weights, const float *outputs, int32_t threads) {
    if (!expert) fail(MEMRA_STATUS_INVALID_ARGUMENT, "expert is NULL");
    if (rows < 1 || rows > 64)
        fail(MEMRA_STATUS_INVALID_ARGUMENT, "rows " + std::to_string(rows) + " is outside 1..64");
    if (!inputs) fail(MEMRA_STATUS_INVALID_ARGUMENT, "inputs is NULL");
    if (!route_weights) fail(MEMRA_STATUS_INVALID_ARGUMENT, "route_weights is NULL");
    if (!outputs) fail(MEMRA_STATUS_INVALID_ARGUMENT, "outputs is NULL");
    validate_threads(threads);
    validate_expert(*expert, -1);
}

}  // namespace memra
