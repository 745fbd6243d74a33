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
#endif

typedef struct memra_qtype_info {
    int32_t id;          /* ggml type id */
    const char *name;    /* ggml's spelling: "q4_K", "iq3_s", ... */
    int32_t block_elems; /* values per block; in_features must be a multiple */
    int32_t block_bytes; /* bytes per block */
    int32_t act_format;  /* memra_act_format ggml pairs it with (CONTRACT.md, "Math") */
} memra_qtype_info;

/* The twelve weight formats of ABI v2, in ggml id order. */
#define MEMRA_QTYPE_COUNT 12
static const memra_qtype_info memra_qtype_table[MEMRA_QTYPE_COUNT] = {
    {0, "f32", 1, 4, MEMRA_ACT_F32},
    {2, "q4_0", 32, 18, MEMRA_ACT_Q8_0},
    {8, "q8_0", 32, 34, MEMRA_ACT_Q8_0},
    {10, "q2_K", 256, 84, MEMRA_ACT_Q8_K},
    {11, "q3_K", 256, 110, MEMRA_ACT_Q8_K},
    {12, "q4_K", 256, 144, MEMRA_ACT_Q8_K},
    {13, "q5_K", 256, 176, MEMRA_ACT_Q8_K},
    {14, "q6_K", 256, 210, MEMRA_ACT_Q8_K},
    {21, "iq3_s", 256, 110, MEMRA_ACT_Q8_K},
    {23, "iq4_xs", 256, 136, MEMRA_ACT_Q8_K},
    {30, "bf16", 1, 2, MEMRA_ACT_BF16},
    {40, "nvfp4", 64, 36, MEMRA_ACT_Q8_0},
};

/* NULL when qtype is not one of the twelve. */
static inline const memra_qtype_info *memra_qtype_find(int32_t qtype) {
    for (int i = 0; i < MEMRA_QTYPE_COUNT; ++i)
        if (memra_qtype_table[i].id == qtype) return &memra_qtype_table[i];
    return NULL;
}

/* Activation block geometry: F32 and BF16 are plain arrays (block of 1). */
static inline int32_t memra_act_block_elems(int32_t act_format) {
    switch (act_format) {
    case MEMRA_ACT_Q8_0: return 32;
    case MEMRA_ACT_Q8_K: return 256;
    default: return 1;
    }
}

static inline int32_t memra_act_block_bytes(int32_t act_format) {
    switch (act_format) {
    case MEMRA_ACT_F32: return 4;
    case MEMRA_ACT_BF16: return 2;
    case MEMRA_ACT_Q8_0: return 34;
    case MEMRA_ACT_Q8_K: return 292;
    default: return 0;
    }
}

static inline const char *memra_act_format_name(int32_t act_format) {
    switch (act_format) {
    case MEMRA_ACT_F32: return "f32";
    case MEMRA_ACT_BF16: return "bf16";
    case MEMRA_ACT_Q8_0: return "q8_0";
    case MEMRA_ACT_Q8_K: return "q8_K";
    default: return "?";
    }
}

/* Bytes of one quantized activation row of n values (n a multiple of the format's block). */
static inline size_t memra_act_row_bytes(int32_t act_format, int32_t n) {
    return (size_t)(n / memra_act_block_elems(act_format)) * (size_t)memra_act_block_bytes(act_format);
}

#ifdef __cplusplus
}
#endif

#endif
