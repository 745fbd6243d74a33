// What every SIMD kernel shares, whatever the ISA layer: the float side of the canonical order
// v2 of the integer-dot formats (formats spec §5.3, scalar/block_order.h: per output and scale
// block one exact int32 and one fma) with lanes over OUTPUT rows, the float dots' final fold, and
// the row / activation loop drivers. Compiled once per ISA folder; everything lives in the
// namespace that folder's isa_select.h names (MEMRA_SIMD_NS), so several builds can be linked
// into one program without clashes.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "isa_select.h"  // the ISA folder's: MEMRA_SIMD_NS, names, features, its Isa layer
#include "simd/row_sums.h"

namespace memra::simd::MEMRA_SIMD_NS {

// ggml's hsum_float_8: r_j = acc[j+4] + acc[j], then (r0 + r2) + (r1 + r3). The F32 and BF16
// dots' last fold (their version-1 orders).
inline float hsum8(__m256 acc) {
    const __m128 r = _mm_add_ps(_mm256_extractf128_ps(acc, 1), _mm256_castps256_ps128(acc));
    const __m128 s = _mm_add_ps(r, _mm_movehl_ps(r, r));  // s0 = r0 + r2, s1 = r1 + r3
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

inline float fp16(const uint8_t *p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return _cvtsh_ss(h);  // exact widening, the same value as memra::fp16_to_f32
}

// The fp16 values at p and p + 2 in lanes 0 and 1 (4 bytes read: a format's d | dmin pair, or a
// d followed by at least 2 more bytes of its block): one 32-bit load and one vcvtph2ps, where
// fp16() costs an insert and a convert per value.
inline __m128 fp16x2(const uint8_t *p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return _mm_cvtph_ps(_mm_cvtsi32_si128(v));
}
inline float fp16_lead(const uint8_t *p) { return _mm_cvtss_f32(fp16x2(p)); }

inline float f32(const uint8_t *p) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
}

inline __m256i load256(const void *p) { return _mm256_loadu_si256(static_cast<const __m256i *>(p)); }
inline __m128i load128(const void *p) { return _mm_loadu_si128(static_cast<const __m128i *>(p)); }

// [lo nibbles of the 16 bytes at p | hi nibbles of them] as 32 bytes: the 16 bytes in both halves
// (a broadcast load), the high half shifted down by 4 (bits from the next byte are masked off).
inline __m256i nibbles_lo_hi(const uint8_t *p) {
    const __m256i x = _mm256_broadcastsi128_si256(load128(p));
    return _mm256_and_si256(_mm256_srlv_epi64(x, _mm256_setr_epi64x(0, 0, 4, 4)), _mm256_set1_epi8(0x0F));
}

inline __m256i broadcast128(__m128i x) { return _mm256_broadcastsi128_si256(x); }

constexpr int kMaxM = 64;  // memra_kernel_v2::gemm's largest m

// The rows path's software prefetch distance along each weight row (one stream per row of a
// tile: 4 rows, or 8 on the AVX-512 pair path). Measured with 4-row tiles on a whole 8-expert
// token call when the token path still shared it, 2026-12-03: the 32/64-element formats gain
// 20-50% with 512 bytes ahead over 4 blocks (72 bytes for Q4_0), while the compute-bound
// super-block formats are best at 4 blocks (1 KiB cost them up to 12%).
template <class F>
constexpr size_t prefetch_bytes() {
    return F::kElems >= 256 ? 4 * F::kBytes : 512;
}

// Weight block b of R consecutive rows decoded, each row's stream prefetched ahead.
template <class F, int R>
inline void decode_rows(const uint8_t *w, size_t row_bytes, int32_t b, typename F::Block blk[R]) {
    for (int r = 0; r < R; ++r) {
        const uint8_t *p = w + size_t(r) * row_bytes + size_t(b) * F::kBytes;
        _mm_prefetch(reinterpret_cast<const char *>(p + prefetch_bytes<F>()), _MM_HINT_T0);
        F::decode(p, blk[r]);
    }
}

// The drivers. A format F (an integer-dot format; F32 and BF16 have drivers of their own)
// provides:
//   kElems, kBytes        weight block geometry
//   kActBytes             bytes of the activation that one weight block pairs with
//   Act, act(a)           that activation block prepared once for all the rows of a tile
//   Head                  what the float side needs of one row's block (its f32 scales)
//   Block, decode(p, Block &), head(const Block &)   one weight block decoded once (rows path)
//   ints<Wide>(const Block &, const Act &) -> Ints   the exact int lanes of (row, activation,
//                         block) (Wide: the rows path, see formats_q8_K_act.h)
//   token(p, const Act &, Head &) -> Ints            the same decoded in registers (token path)
//   Scales<R>, scales<R>(heads), combine<R>(acc, scales, ints, x)   the float side over R
//                         rows (simd/row_sums.h: OneTerm, ScaleAndMinTerms, or the format's own)
// R rows are processed together, sharing each activation block; every weight block is decoded
// once and then used for all m activations (the rows path). Each accumulator lane is one
// (row, activation) chain in the canonical order, so gemm == gemv bit for bit.
template <class F, int R>
inline void tile(const uint8_t *w, size_t row_bytes, int32_t n, const uint8_t *xq, size_t xq_stride, int32_t m,
                 float *y, size_t ldy) {
    using V = RowVec<R>;
    typename V::F acc[kMaxM];
    for (int32_t j = 0; j < m; ++j) acc[j] = V::zero();
    typename F::Block blk[R];
    const typename F::Head *heads[R];
    for (int r = 0; r < R; ++r) heads[r] = &F::head(blk[r]);
    const int32_t nb = n / F::kElems;
    for (int32_t b = 0; b < nb; ++b) {
        decode_rows<F, R>(w, row_bytes, b, blk);
        const typename F::template Scales<R> scales = F::template scales<R>(heads);
        for (int32_t j = 0; j < m; ++j) {
            const typename F::Act x = F::act(xq + size_t(j) * xq_stride + size_t(b) * F::kActBytes);
            Ints ints[R];
            for (int r = 0; r < R; ++r) ints[r] = F::template ints<true>(blk[r], x);
            F::template combine<R>(acc[j], scales, ints, x);
        }
    }
    for (int32_t j = 0; j < m; ++j) {
        float out[R];
        V::store(out, acc[j]);
        for (int r = 0; r < R; ++r) y[size_t(j) * ldy + size_t(r)] = out[r];
    }
}

// The rows path of a format where a wider form replaces the tiles below (kEnabled, gemm(...)):
// specialized, one partial specialization per header on a list of formats (kOneOf), by the
// AVX-512 build's panels and activation pairs (simd/wide512_q8_0_act.h, the super-block panels
// of simd/wide512_panels_q8_K.h and simd/wide512_panels_chunks.h) and the 256-bit builds' 8-row
// panels (simd/panels256.h).
template <class F, class = void>
struct RowsPath {
    static constexpr bool kEnabled = false;
};

// Whether F is one of Fs (the format lists of the RowsPath specializations).
template <class F, class... Fs>
inline constexpr bool kOneOf = (std::is_same_v<F, Fs> || ...);

// The rows path's rows per tile: 8 for the 32/64-element formats (each prepared activation block
// shared by twice the rows; their decoded blocks are small), 4 for the super-block formats
// (8 decoded super-blocks spilled out of L1 on the AVX-512 build, memra-bench-micro 2026-12-03).
template <class F>
constexpr int gemm_rows() {
    return F::kElems >= 256 ? 4 : 8;
}

// The token path (m = 1). Each thread reads its rows in memory order, a tile of R rows side by
// side and then the next tile, so its weights arrive as one sequential stream (R = 1) or R
// streams a row apart. Every row's dot is one fma chain in block order (the canonical order):
// the 32/64-element formats, whose blocks are cheap, run R = 4 rows whose block sums are reduced
// into one vector (one cvt + one fma per block for the 4 rows, simd/row_sums.h); the super-block
// formats have enough work per block in one row, and from DRAM one stream ran 2-3x faster than 4
// on an AMD Zen 5 (Q4_K 7.6 -> 18 GB/s at 1 thread; docs/benchmarks.md): their int lanes are
// summed to one int32 per super-block and row. The activation blocks (TokenAct) are prepared once
// per window of the row, on the stack, and read back from L1 by every row. Each row's weight
// block is decoded and dotted at once, in registers (F::token), never stored.
template <class F>
constexpr int token_rows() {
    return F::kElems >= 256 ? 1 : 4;
}

// The super-block formats' one row, two consecutive blocks at a time (token_row_pairs): one
// integer tree reduces both blocks' S (and M) where one block alone paid almost a whole tree,
// and the row's fma chain stays in block order, so one DRAM stream and the same bits. Chosen
// per ISA by measurement (AMD Zen 5 VM, memra-bench-micro gemv in cache, best of 5 alternating
// runs, 2026-12-05): the AVX-512 builds (32 vector registers) gain 4-8% on Q2_K, Q3_K, Q4_K,
// IQ4_XS and are even on the rest; the 256-bit builds (16 ymm: two blocks' decodes spill) lose
// 2-7% (Q6_K, Q4_K, Q2_K), so they reduce block by block. An unpack/add tree in place of the
// vphaddd tree measured the same (dropped). Tried and dropped the same day: two
// rows per token tile, one tree for both rows' S and M (in cache +10-15% on Q2_K/Q4_K/Q5_K,
// but from DRAM two streams halved every super-block format: Q4_K 20 -> 11 GB/s at 1 thread,
// like the four streams measured before); the scale multipliers as dword broadcasts from
// memory instead of an in-lane shuffle per chunk (no gain, AVX2 Q4_K 10% slower).
#ifdef MEMRA_SIMD_WIDE512
constexpr bool kTokenBlockPairs = true;
#else
constexpr bool kTokenBlockPairs = false;
#endif

// The software prefetch distance along each stream, into L2: 4 KiB for every format. Token
// calls (8 experts 4096 x 1536, one process, reps alternating), super-block formats, 2 KiB ->
// 4 KiB: Intel device host +10-25% at 1-16 threads (q6_K 16 threads 82 -> 96 GB/s, q4_K 80 ->
// 91, 1 thread q2_K 9.4 -> 10.8), 8 KiB a few % more there; AMD Zen 5 VM: 0, 2 and 4 KiB within
// 2%, 8 KiB 5-8% slower. 32/64-element formats (4 streams): 2, 4, 8 KiB within 3% on the Intel
// host, 16 KiB 5-10% slower on both; none halves the Zen 5's speed. docs/benchmarks.md.
constexpr size_t kTokenPrefetchBytes = 4096;

// The prefetch offset from block b of each of a tile's R rows: `distance` bytes further along
// that row's stream, where the stream of row slot r is rows r, r + R, r + 2R, ... (the same slot
// of the following tiles), not the next row, which the tile reads already. Kept incrementally
// (one compare per block): dividing by row_bytes at every block was a 64-bit div in the 4-row
// loop of the 32-element formats.
template <class F, int R>
struct PrefetchAhead {
    size_t ahead, next_at, row_bytes;  // next_at: the stream offset at which `ahead` grows next
    PrefetchAhead(int32_t b0, size_t row_bytes_) : row_bytes(row_bytes_) {
        constexpr size_t distance = kTokenPrefetchBytes;
        const size_t at = size_t(b0) * F::kBytes + distance;
        const size_t rows_on = at / row_bytes;  // whole rows passed
        ahead = distance + rows_on * size_t(R - 1) * row_bytes;
        next_at = (rows_on + 1) * row_bytes;
    }
    size_t at_block(int32_t b) {
        if constexpr (R > 1)
            while (size_t(b) * F::kBytes + kTokenPrefetchBytes >= next_at) {
                ahead += size_t(R - 1) * row_bytes;
                next_at += row_bytes;
            }
        return ahead;
    }
};

// Prepared activation blocks kept for one window of a row: at most 16 KiB of stack, so the
// window stays in L1 with the weights streaming past it (Q8_0's 96-byte blocks: 170 blocks,
// 5440 values; Q8_K formats: 11776 values or more); a longer row is done window by window.
constexpr size_t kActWindowBytes = 16 * 1024;
constexpr int32_t kWindowRowGroup = 16;  // rows sharing a window's preparation when a row spans several

// The activation blocks of the token path: F's own (F::Act, F::act) unless a build gives the
// format a token-only layout (TokenAct, specialized by simd/token256_q8_K_act.h). The window
// prepares them once per call for every row, so a layout that suits the token loop costs the
// rows path nothing.
template <class F, class = void>
struct TokenAct {
    using type = typename F::Act;
    static inline type make(const uint8_t *a) { return F::act(a); }
};
template <class F>
using TokenActOf = typename TokenAct<F>::type;

template <class F>
inline void prepare_window(TokenActOf<F> *x, const uint8_t *xq, int32_t b0, int32_t b1) {
    for (int32_t b = b0; b < b1; ++b) x[b - b0] = TokenAct<F>::make(xq + size_t(b) * F::kActBytes);
}

// A wider layer's token path of a format's 4-row tiles (kEnabled, tile(acc, w, row_bytes, b0, b1,
// x), and chosen(): whether the process's kernel tuning takes it, else the tiles go block by
// block): specialized by simd/wide512_q8_0_act.h in the AVX-512 build only (row pairs in 512-bit
// registers), with the same float side.
template <class F, class = void>
struct TokenRowPairs {
    static constexpr bool kEnabled = false;
};

// acc[r] + the dot of blocks [b0, b1) of row r (R rows from w) against the prepared window,
// block by block: the R rows' accumulators are one vector (simd/row_sums.h), kept in a register
// for the loop.
template <class F, int R>
inline void token_blocks(float acc_io[R], const uint8_t *w, size_t row_bytes, int32_t b0, int32_t b1,
                         const TokenActOf<F> *x) {
    using V = RowVec<R>;
    typename V::F acc = V::load(acc_io);
    PrefetchAhead<F, R> prefetch(b0, row_bytes);
    for (int32_t b = b0; b < b1; ++b) {
        const size_t ahead = prefetch.at_block(b);
        typename F::Head h[R];
        const typename F::Head *heads[R];
        Ints ints[R];
        for (int r = 0; r < R; ++r) {
            const uint8_t *p = w + size_t(r) * row_bytes + size_t(b) * F::kBytes;
            _mm_prefetch(reinterpret_cast<const char *>(p + ahead), _MM_HINT_T1);
            ints[r] = F::token(p, x[b - b0], h[r]);
            heads[r] = &h[r];
        }
        F::template combine<R>(acc, F::template scales<R>(heads), ints, x[b - b0]);
    }
    V::store(acc_io, acc);
}

// A wider layer's whole step of token_row_pairs for a format (kEnabled, step(acc, p, x0, x1):
// blocks p and p + F::kBytes against x0 and x1, the fmas in block order): specialized by
// simd/wide512_q8_K_act.h where both blocks' fields decode together.
template <class F, class = void>
struct TokenBlockPair {
    static constexpr bool kEnabled = false;
};

// Whether a format's step of token_row_pairs prefetches every cache line of its two blocks
// (F::kTokenPairPrefetchEveryLine) rather than one line per block (the default).
template <class F, class = void>
struct TokenPairPrefetchEveryLine : std::false_type {};
template <class F>
struct TokenPairPrefetchEveryLine<F, std::void_t<decltype(F::kTokenPairPrefetchEveryLine)>>
    : std::bool_constant<F::kTokenPairPrefetchEveryLine> {};

// The software prefetches of one step over two blocks of a row (token_row_pairs; the AVX-512
// row-pair tiles, per row): blocks p and p + F::kBytes, `ahead` bytes further along the row's
// stream. A pair no longer than a line (the 32-element formats' 34-36 bytes) takes one: the
// steps' prefetches still touch every line, at half the instructions; Q8_0's 68 bytes take two
// (one per step would skip a line in 17). The every-line form (Q6_K) prefetches into L1 (T0):
// with its 512-bit chunk-pair loads, T1 left Q6_K from DRAM at a median 0.96 of v1 on the Zen 5
// VM, T0 1.03 at 1 thread and 1.02 at 2 (11 alternating rounds, 2026-12-05), even in cache.
template <class F>
inline void prefetch_block_pair(const uint8_t *p, size_t ahead) {
    if constexpr (TokenPairPrefetchEveryLine<F>::value) {
        for (size_t o = 0; o < 2 * F::kBytes; o += 64)
            _mm_prefetch(reinterpret_cast<const char *>(p + ahead + o), _MM_HINT_T0);
    } else {
        _mm_prefetch(reinterpret_cast<const char *>(p + ahead), _MM_HINT_T1);
        if constexpr (2 * F::kBytes > 64) _mm_prefetch(reinterpret_cast<const char *>(p + F::kBytes + ahead), _MM_HINT_T1);
    }
}

// One row of a super-block format, blocks [b0, b1), two blocks at a time: both blocks' int
// lanes reduced by one integer tree (F::combine_pair), then the row's fmas in block order.
template <class F>
inline void token_row_pairs(float &acc_io, const uint8_t *w, size_t row_bytes, int32_t b0, int32_t b1,
                            const TokenActOf<F> *x) {
    float acc = acc_io;
    PrefetchAhead<F, 1> prefetch(b0, row_bytes);
    int32_t b = b0;
    for (; b + 2 <= b1; b += 2) {
        const uint8_t *p = w + size_t(b) * F::kBytes;
        prefetch_block_pair<F>(p, prefetch.at_block(b));
        if constexpr (TokenBlockPair<F>::kEnabled) {
            TokenBlockPair<F>::step(acc, p, x[b - b0], x[b + 1 - b0]);
        } else {
            typename F::Head h0, h1;
            const Ints i0 = F::token(p, x[b - b0], h0);
            const Ints i1 = F::token(p + F::kBytes, x[b + 1 - b0], h1);
            F::combine_pair(acc, h0, h1, i0, i1, x[b - b0], x[b + 1 - b0]);
        }
    }
    acc_io = acc;
    if (b < b1) token_blocks<F, 1>(&acc_io, w, row_bytes, b, b1, x + (b - b0));  // an odd last block
}

// The same by the form chosen for F and R: a wider layer's row pairs, block pairs, or block by block.
template <class F, int R>
inline void token_tile(float acc_io[R], const uint8_t *w, size_t row_bytes, int32_t b0, int32_t b1,
                       const TokenActOf<F> *x) {
    if constexpr (TokenRowPairs<F>::kEnabled && R == 4) {
        if (TokenRowPairs<F>::chosen()) TokenRowPairs<F>::tile(acc_io, w, row_bytes, b0, b1, x);
        else token_blocks<F, R>(acc_io, w, row_bytes, b0, b1, x);
    } else if constexpr (R == 1 && F::kElems >= 256 && kTokenBlockPairs) token_row_pairs<F>(acc_io[0], w, row_bytes, b0, b1, x);
    else token_blocks<F, R>(acc_io, w, row_bytes, b0, b1, x);
}

// Rows [r, rows) in tiles of R, then one by one; blocks [b0, b1) against the window.
template <class F, int R>
inline void token_rows_window(float *acc, const uint8_t *w, size_t row_bytes, int32_t rows, int32_t b0, int32_t b1,
                              const TokenActOf<F> *x) {
    int32_t r = 0;
    for (; r + R <= rows; r += R) token_tile<F, R>(acc + r, w + size_t(r) * row_bytes, row_bytes, b0, b1, x);
    for (; r < rows; ++r) token_tile<F, 1>(acc + r, w + size_t(r) * row_bytes, row_bytes, b0, b1, x);
}

// The token path of a format through its rows path's panels (m = 1: one decode of 16 rows per
// block, lanes over outputs), where that is the faster form on the tuned vendor's cores
// (simd/tuning.h): kEnabled, chosen(), and gemv(...) returning the rows it did (whole panels).
// Specialized by simd/wide512_token_by_panels.h. The same bits either way: every form computes
// each output in the canonical order.
template <class F, class = void>
struct TokenByPanels {
    static constexpr bool kEnabled = false;
};

// A format's token path in a second form of the same bits (kEnabled, chosen(), and `type`: a
// format on F's blocks whose token steps differ) where the tuned vendor's cores (simd/tuning.h)
// run that form faster. Specialized by simd/wide512_token_tuned.h.
template <class F, class = void>
struct TokenTunedForm {
    static constexpr bool kEnabled = false;
};

// The token path in its own form: rows in tiles of token_rows<F>(), blocks against a window of
// prepared activations.
template <class F>
void gemv_rows(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, float *y) {
    using Act = TokenActOf<F>;
    constexpr int R = token_rows<F>();
    constexpr int32_t kWindow = int32_t(kActWindowBytes / sizeof(Act)) > 0 ? int32_t(kActWindowBytes / sizeof(Act)) : 1;
    static_assert(kWindowRowGroup % R == 0, "row groups hold whole tiles");
    const uint8_t *x = static_cast<const uint8_t *>(xq);
    const int32_t nb = n / F::kElems;
    Act window[kWindow];
    float acc[kWindowRowGroup];
    const bool one_window = nb <= kWindow;  // the usual case: the window prepared once per call
    if (one_window) prepare_window<F>(window, x, 0, nb);
    for (int32_t r0 = 0; r0 < rows; r0 += kWindowRowGroup) {
        const int32_t group = rows - r0 < kWindowRowGroup ? rows - r0 : kWindowRowGroup;
        const uint8_t *wg = w + size_t(r0) * row_bytes;
        for (int32_t r = 0; r < group; ++r) acc[r] = 0.0f;
        for (int32_t b0 = 0; b0 < nb; b0 += kWindow) {
            const int32_t b1 = nb - b0 < kWindow ? nb : b0 + kWindow;
            if (!one_window) prepare_window<F>(window, x, b0, b1);
            token_rows_window<F, R>(acc, wg, row_bytes, group, b0, b1, window);
        }
        for (int32_t r = 0; r < group; ++r) y[r0 + r] = acc[r];
    }
}

template <class F>
void gemv(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, float *y) {
    if constexpr (TokenTunedForm<F>::kEnabled)
        if (TokenTunedForm<F>::chosen()) return gemv_rows<typename TokenTunedForm<F>::type>(w, row_bytes, rows, n, xq, y);
    int32_t r = 0;
    if constexpr (TokenByPanels<F>::kEnabled)
        if (TokenByPanels<F>::chosen()) r = TokenByPanels<F>::gemv(w, row_bytes, rows, n, xq, y);
    if (r < rows) gemv_rows<F>(w + size_t(r) * row_bytes, row_bytes, rows - r, n, xq, y + r);
}

// The rows [r, rows) left after a wider form took rows [0, r): tiles of 4 rows, then single rows
// (every rows path ends this way: the 8-row tiles below, the AVX-512 panels and pair tiles).
template <class F>
inline void gemm_tail(const uint8_t *w, size_t row_bytes, int32_t r, int32_t rows, int32_t n, const uint8_t *x,
                      size_t xq_stride, int32_t m, float *y, size_t ldy) {
    for (; r + 4 <= rows; r += 4) tile<F, 4>(w + size_t(r) * row_bytes, row_bytes, n, x, xq_stride, m, y + r, ldy);
    for (; r < rows; ++r) tile<F, 1>(w + size_t(r) * row_bytes, row_bytes, n, x, xq_stride, m, y + r, ldy);
}

// The rows [r, rows) in tiles of gemm_rows<F>(), then gemm_tail (the 256-bit builds' panels
// hand their leftover rows, or a whole call they do not take, to this).
template <class F>
inline void gemm_tiles(const uint8_t *w, size_t row_bytes, int32_t r, int32_t rows, int32_t n, const uint8_t *x,
                       size_t xq_stride, int32_t m, float *y, size_t ldy) {
    constexpr int R = gemm_rows<F>();
    for (; r + R <= rows; r += R)
        tile<F, R>(w + size_t(r) * row_bytes, row_bytes, n, x, xq_stride, m, y + r, ldy);
    gemm_tail<F>(w, row_bytes, r, rows, n, x, xq_stride, m, y, ldy);
}

template <class F>
void gemm(const uint8_t *w, size_t row_bytes, int32_t rows, int32_t n, const void *xq, size_t xq_stride,
          int32_t m, float *y, size_t ldy) {
    const uint8_t *x = static_cast<const uint8_t *>(xq);
    if (m == 1) return gemv<F>(w, row_bytes, rows, n, xq, y);
    if (m > kMaxM) {  // beyond the interface's 64: in slices, each result still gemv's
        for (int32_t j = 0; j < m; j += kMaxM)
            gemm<F>(w, row_bytes, rows, n, x + size_t(j) * xq_stride, xq_stride, m - j < kMaxM ? m - j : kMaxM,
                    y + size_t(j) * ldy, ldy);
        return;
    }
    if constexpr (RowsPath<F>::kEnabled) {
        RowsPath<F>::gemm(w, row_bytes, rows, n, x, xq_stride, m, y, ldy);
        return;
    }
    gemm_tiles<F>(w, row_bytes, 0, rows, n, x, xq_stride, m, y, ldy);
}

}  // namespace memra::simd::MEMRA_SIMD_NS
