/* The facts about each weight and activation format that the core, the plugins, the tests and
 * the tools all need: ids, names, block geometry and the activation format each pairs with.
 * One table, so that validation and kernels can never disagree about a row's size. */
#ifndef MEMRA_QTYPES_H
#define MEMRA_QTYPES_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"

#ifdef __cplusplus
extern "C" {
#define MEMRA_QTYPES_INLINE_ static inline constexpr /* usable in static_asserts */
#else
#define MEMRA_QTYPES_INLINE_ static inline
#endif

typedef struct memra_qtype_info {
    int32_t id;          /* ggml type id */
    const char *name;    /* ggml's spelling: "q4_K", "iq3_s", ... */
    int32_t block_elems; /* values per block; in_features must be a multiple */
    int32_t block_bytes; /* bytes per block */
    int32_t act_format;  /* memra_act_format ggml pairs it with (CONTRACT.md, "Math") */
} memra_qtype_info;

/* THE list of weight formats: every per-format fact lives in this one row, and everything else
 * (this table, both plugins' kernel declarations and tables, the encoders' dispatch, the test
 * name lists, the tools' format lists) is derived from it. In ggml id order.
 *
 *   X(name, NAME, id, block_elems, block_bytes, act_format)
 *     name         ggml's spelling, also the suffix of the per-format symbols: scalar::dot_<name>,
 *                  blocks::dequantize_row_<name>, the SIMD gemv_<name>/gemm_<name>,
 *                  quantize::encode_<name>, and common/block_fields.h's namespace <name>
 *     NAME         the SIMD plugins' format struct (simd/formats_*.h); MEMRA_QTYPE_<NAME> in
 *                  memra/cpu_experts.h where the public header names it
 *     id           ggml type id
 *     block_elems  values per block; in_features must be a multiple
 *     block_bytes  bytes per block
 *     act_format   the memra_act_format ggml pairs it with (CONTRACT.md, "Math")
 *
 * A new format: its row here, its accessors in common/block_fields.h (static_asserts check them
 * against this row), its decoder (plugins/common/decode_*.cpp) and scalar dot, its SIMD struct
 * (static_asserts again), its encoder in tools/quantize, and its row in the docs (README.md,
 * "Adding a weight format"). */
#define MEMRA_FORMAT_LIST(X)                          \
    X(f32, F32, 0, 1, 4, MEMRA_ACT_F32)               \
    X(q4_0, Q4_0, 2, 32, 18, MEMRA_ACT_Q8_0)          \
    X(q8_0, Q8_0, 8, 32, 34, MEMRA_ACT_Q8_0)          \
    X(q2_K, Q2_K, 10, 256, 84, MEMRA_ACT_Q8_K)        \
    X(q3_K, Q3_K, 11, 256, 110, MEMRA_ACT_Q8_K)       \
    X(q4_K, Q4_K, 12, 256, 144, MEMRA_ACT_Q8_K)       \
    X(q5_K, Q5_K, 13, 256, 176, MEMRA_ACT_Q8_K)       \
    X(q6_K, Q6_K, 14, 256, 210, MEMRA_ACT_Q8_K)       \
    X(iq3_s, IQ3_S, 21, 256, 110, MEMRA_ACT_Q8_K)     \
    X(iq4_xs, IQ4_XS, 23, 256, 136, MEMRA_ACT_Q8_K)   \
    X(bf16, BF16, 30, 1, 2, MEMRA_ACT_BF16)           \
    X(mxfp4, MXFP4, 39, 32, 17, MEMRA_ACT_Q8_0)       \
    X(nvfp4, NVFP4, 40, 64, 36, MEMRA_ACT_Q8_0)

/* The list's rows as memra_qtype_info, and their number. */
#define MEMRA_QTYPE_ROW_(name, NAME, id, elems, bytes, act) {id, #name, elems, bytes, act},
#define MEMRA_QTYPE_ONE_(name, NAME, id, elems, bytes, act) +1
#define MEMRA_QTYPE_COUNT (0 MEMRA_FORMAT_LIST(MEMRA_QTYPE_ONE_))

/* The names as one string literal, for help texts: " f32 q4_0 ... nvfp4" (each name after a space). */
#define MEMRA_QTYPE_SPACE_NAME_(name, NAME, id, elems, bytes, act) " " #name
#define MEMRA_QTYPE_NAMES_SPACED MEMRA_FORMAT_LIST(MEMRA_QTYPE_SPACE_NAME_)

/* The weight formats of ABI v2, in ggml id order (constexpr in C++, for static_asserts). */
#ifdef __cplusplus
static constexpr memra_qtype_info memra_qtype_table[MEMRA_QTYPE_COUNT] = {MEMRA_FORMAT_LIST(MEMRA_QTYPE_ROW_)};
#else
static const memra_qtype_info memra_qtype_table[MEMRA_QTYPE_COUNT] = {MEMRA_FORMAT_LIST(MEMRA_QTYPE_ROW_)};
#endif

/* NULL when qtype is not in the list. */
MEMRA_QTYPES_INLINE_ const memra_qtype_info *memra_qtype_find(int32_t qtype) {
    for (int i = 0; i < MEMRA_QTYPE_COUNT; ++i)
        if (memra_qtype_table[i].id == qtype) return &memra_qtype_table[i];
    return NULL;
}

/* Activation block geometry: F32 and BF16 are plain arrays (block of 1). */
MEMRA_QTYPES_INLINE_ int32_t memra_act_block_elems(int32_t act_format) {
    switch (act_format) {
    case MEMRA_ACT_Q8_0: return 32;
    case MEMRA_ACT_Q8_K: return 256;
    default: return 1;
    }
}

MEMRA_QTYPES_INLINE_ int32_t memra_act_block_bytes(int32_t act_format) {
    switch (act_format) {
    case MEMRA_ACT_F32: return 4;
    case MEMRA_ACT_BF16: return 2;
    case MEMRA_ACT_Q8_0: return 34;
    case MEMRA_ACT_Q8_K: return 292;
    default: return 0;
    }
}

MEMRA_QTYPES_INLINE_ const char *memra_act_format_name(int32_t act_format) {
    switch (act_format) {
    case MEMRA_ACT_F32: return "f32";
    case MEMRA_ACT_BF16: return "bf16";
    case MEMRA_ACT_Q8_0: return "q8_0";
    case MEMRA_ACT_Q8_K: return "q8_K";
    default: return "?";
    }
}

/* Bytes of one quantized activation row of n values (n a multiple of the format's block). */
MEMRA_QTYPES_INLINE_ size_t memra_act_row_bytes(int32_t act_format, int32_t n) {
    return (size_t)(n / memra_act_block_elems(act_format)) * (size_t)memra_act_block_bytes(act_format);
}

#ifdef __cplusplus
}

/* The list's rows by name, for compile-time checks: memra::formats::q4_K.block_bytes. */
namespace memra::formats {
#define MEMRA_QTYPE_NAMED_(name, NAME, id, elems, bytes, act) \
    constexpr memra_qtype_info name = {id, #name, elems, bytes, act};
MEMRA_FORMAT_LIST(MEMRA_QTYPE_NAMED_)
#undef MEMRA_QTYPE_NAMED_
}  // namespace memra::formats
#endif

#endif
