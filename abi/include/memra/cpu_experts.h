/* memra-cpu-experts: the public v2 ABI plus the names a C or C++ caller wants beside it.
 *
 * memra_cpu_experts_v2.h is the exact surface the memra engine dlopens and must never change.
 * This header adds what that file leaves implicit: named status codes, named qtype ids, and
 * compile-time checks that the layouts are the ones the engine was built against. */
#ifndef MEMRA_CPU_EXPERTS_H
#define MEMRA_CPU_EXPERTS_H

#include "../memra_cpu_experts_v2.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes returned by every int32_t entry point (CONTRACT.md, "Validation"). */
#define MEMRA_STATUS_OK 0
#define MEMRA_STATUS_INVALID_ARGUMENT 1
#define MEMRA_STATUS_UNSUPPORTED_QTYPE 2
#define MEMRA_STATUS_IO_ERROR 3
#define MEMRA_STATUS_OUT_OF_MEMORY 4
#define MEMRA_STATUS_NO_BACKEND 5
#define MEMRA_STATUS_INTERNAL 6

/* Weight formats accepted in CpuProjectionV2::qtype (ggml's type ids). */
#define MEMRA_QTYPE_F32 0
#define MEMRA_QTYPE_Q4_0 2
#define MEMRA_QTYPE_Q8_0 8
#define MEMRA_QTYPE_Q2_K 10
#define MEMRA_QTYPE_Q3_K 11
#define MEMRA_QTYPE_Q4_K 12
#define MEMRA_QTYPE_Q5_K 13
#define MEMRA_QTYPE_Q6_K 14
#define MEMRA_QTYPE_IQ3_S 21
#define MEMRA_QTYPE_IQ4_XS 23
#define MEMRA_QTYPE_BF16 30
#define MEMRA_QTYPE_MXFP4 39
#define MEMRA_QTYPE_NVFP4 40

/* Extension (not part of the engine's contract; the engine never looks for it): writes one
 * NUL-terminated line describing the backend serving each qtype, or why none is usable, into
 * buf (truncated to fit buf_len). Returns the length the full line needs, without the NUL. */
size_t memra_cpu_experts_describe(char *buf, size_t buf_len);

#ifdef __cplusplus
}
#endif

/* The engine was compiled against these exact layouts (x86-64). */
#if defined(__x86_64__) || defined(_M_X64)
#ifdef __cplusplus
#define MEMRA_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define MEMRA_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif
MEMRA_STATIC_ASSERT(sizeof(CpuProjectionV2) == 64, "CpuProjectionV2 must be 64 bytes");
MEMRA_STATIC_ASSERT(offsetof(CpuProjectionV2, weights) == 0, "CpuProjectionV2.weights offset");
MEMRA_STATIC_ASSERT(offsetof(CpuProjectionV2, qtype) == 8, "CpuProjectionV2.qtype offset");
MEMRA_STATIC_ASSERT(offsetof(CpuProjectionV2, in_features) == 12, "CpuProjectionV2.in_features offset");
MEMRA_STATIC_ASSERT(offsetof(CpuProjectionV2, out_features) == 16, "CpuProjectionV2.out_features offset");
MEMRA_STATIC_ASSERT(offsetof(CpuProjectionV2, row_bytes) == 24, "CpuProjectionV2.row_bytes offset");
MEMRA_STATIC_ASSERT(offsetof(CpuProjectionV2, byte_len) == 32, "CpuProjectionV2.byte_len offset");
MEMRA_STATIC_ASSERT(offsetof(CpuProjectionV2, file_fd) == 40, "CpuProjectionV2.file_fd offset");
MEMRA_STATIC_ASSERT(offsetof(CpuProjectionV2, file_offset) == 48, "CpuProjectionV2.file_offset offset");
MEMRA_STATIC_ASSERT(offsetof(CpuProjectionV2, scale) == 56, "CpuProjectionV2.scale offset");
MEMRA_STATIC_ASSERT(sizeof(CpuExpertV2) == 200, "CpuExpertV2 must be 200 bytes");
MEMRA_STATIC_ASSERT(offsetof(CpuExpertV2, gate) == 0, "CpuExpertV2.gate offset");
MEMRA_STATIC_ASSERT(offsetof(CpuExpertV2, up) == 64, "CpuExpertV2.up offset");
MEMRA_STATIC_ASSERT(offsetof(CpuExpertV2, down) == 128, "CpuExpertV2.down offset");
MEMRA_STATIC_ASSERT(offsetof(CpuExpertV2, route_weight) == 192, "CpuExpertV2.route_weight offset");
#undef MEMRA_STATIC_ASSERT
#endif

#endif
