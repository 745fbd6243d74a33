// The canonical Q8_0 and Q8_K activation quantizers (plugins/common/quantize.cpp), eight values
// per operation. Per element the same f32 operations: the product with the block's inverse scale
// in the same IEEE multiply, then round to nearest even (vroundps + vcvtps2dq: exactly the scalar
// round_to_i32_rne, and for |v| <= 127 exactly nearest_int). Blocks the scalar code treats
// specially (non-finite values, an all-zero Q8_K block, an inverse scale that is not finite) are
// handed to it whole, so their bytes are its bytes by construction.
#include "simd/quantize_acts.h"

#include <immintrin.h>

#include <cmath>

#include "common/act_layout.h"
#include "common/bytes.h"
#include "common/fp_convert.h"
#include "common/quantize.h"

namespace memra::simd::MEMRA_SIMD_NS {
namespace {

inline __m256 abs8(__m256 v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }

// All lanes finite (|v| <= FLT_MAX is false for NaN and inf).
inline bool all_finite(const __m256 *a, int count) {
    const __m256 limit = _mm256_set1_ps(3.40282347e38f);
    __m256 ok = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    for (int k = 0; k < count; ++k) ok = _mm256_and_ps(ok, _mm256_cmp_ps(a[k], limit, _CMP_LE_OQ));
    return _mm256_movemask_ps(ok) == 0xFF;
}

// The largest of 8 non-negative, non-NaN lanes (max is exact, so its order does not matter).
inline float max8(__m256 m) {
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_max_ss(h, _mm_movehdup_ps(h)));
}

inline __m256i round_to_i32(__m256 v) {
    return _mm256_cvtps_epi32(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// 32 int32 (4 vectors, in element order) as 32 int8 in element order, saturating like
// saturate_i8 (finite input stays within -127..127 anyway).
inline __m256i pack_i8(const __m256i q[4]) {
    const __m256i w01 = _mm256_packs_epi32(q[0], q[1]), w23 = _mm256_packs_epi32(q[2], q[3]);
    const __m256i b = _mm256_packs_epi16(w01, w23);  // lanes interleaved per 128-bit half
    return _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

inline int32_t hsum_i32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}

}  // namespace

// f32_to_bf16 eight at a time: round to nearest even on the bit pattern, a NaN made quiet.
void quantize_row_bf16_simd(const float *x, int32_t n, void *out) {
    uint8_t *o = static_cast<uint8_t *>(out);
    const __m256i abs_mask = _mm256_set1_epi32(0x7FFFFFFF), inf = _mm256_set1_epi32(0x7F800000);
    const __m256i round = _mm256_set1_epi32(0x7FFF), one = _mm256_set1_epi32(1), quiet = _mm256_set1_epi32(0x40);
    int32_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i h[2];
        for (int k = 0; k < 2; ++k) {
            const __m256i u = _mm256_castps_si256(_mm256_loadu_ps(x + i + 8 * k));
            const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs_mask), inf);
            const __m256i even = _mm256_and_si256(_mm256_srli_epi32(u, 16), one);
            const __m256i rne = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, round), even), 16);
            h[k] = _mm256_blendv_epi8(rne, _mm256_or_si256(_mm256_srli_epi32(u, 16), quiet), nan);
        }
        // packus interleaves the 128-bit halves: put the 16 values back in order.
        const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(h[0], h[1]), _MM_SHUFFLE(3, 1, 2, 0));
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(o + 2 * size_t(i)), packed);
    }
    for (; i < n; ++i) store_u16(o + 2 * size_t(i), f32_to_bf16(x[i]));
}

void quantize_row_q8_0_simd(const float *x, int32_t n, void *out) {
    constexpr int kElems = q8_0_act::kBlockElems;
    static_assert(kElems == 32, "four vectors per block");
    uint8_t *o = static_cast<uint8_t *>(out);
    const int nb = n / kElems;
    for (int b = 0; b < nb; ++b) {
        const float *xb = x + size_t(b) * kElems;
        uint8_t *ob = o + size_t(b) * q8_0_act::kBlockBytes;
        __m256 v[4], a[4];
        for (int k = 0; k < 4; ++k) {
            v[k] = _mm256_loadu_ps(xb + 8 * k);
            a[k] = abs8(v[k]);
        }
        if (!all_finite(a, 4)) {
            memra::quantize_row_q8_0(xb, kElems, ob);
            continue;
        }
        const float amax = max8(_mm256_max_ps(_mm256_max_ps(a[0], a[1]), _mm256_max_ps(a[2], a[3])));
        const float d = amax / 127.0f;
        const float id = (amax != 0.0f) ? 127.0f / amax : 0.0f;
        store_u16(ob, f32_to_fp16(d));
        const __m256 idv = _mm256_set1_ps(id);
        __m256i q[4];
        for (int k = 0; k < 4; ++k) q[k] = round_to_i32(_mm256_mul_ps(v[k], idv));
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(ob + 2), pack_i8(q));
    }
}

void quantize_row_q8_K_simd(const float *x, int32_t n, void *out) {
    constexpr int kElems = q8_K_act::kBlockElems, kVecs = kElems / 8;
    static_assert(kElems == 256, "bsums of 16 values are two vectors");
    uint8_t *o = static_cast<uint8_t *>(out);
    const int nb = n / kElems;
    for (int b = 0; b < nb; ++b) {
        const float *xb = x + size_t(b) * kElems;
        uint8_t *ob = o + size_t(b) * q8_K_act::kBlockBytes;
        __m256 a[kVecs];
        __m256 m = _mm256_setzero_ps();
        for (int k = 0; k < kVecs; ++k) {
            a[k] = abs8(_mm256_loadu_ps(xb + 8 * k));
            m = _mm256_max_ps(m, a[k]);
        }
        const float amax = max8(m);
        const bool finite = all_finite(a, kVecs);
        // The signed max is the first element of that magnitude, as the scalar scan finds it.
        auto first_of_largest_magnitude = [&] {
            const __m256 target = _mm256_set1_ps(amax);
            for (int k = 0;; ++k)
                if (const int hit = _mm256_movemask_ps(_mm256_cmp_ps(a[k], target, _CMP_EQ_OQ)))
                    return xb[8 * k + __builtin_ctz(unsigned(hit))];
        };
        const float iscale = (amax == 0.0f || !finite) ? 0.0f : -127.0f / first_of_largest_magnitude();
        if (amax == 0.0f || !finite || !std::isfinite(iscale)) {
            memra::quantize_row_q8_K(xb, kElems, ob);
            continue;
        }
        const __m256 s = _mm256_set1_ps(iscale);
        int8_t *qs = reinterpret_cast<int8_t *>(ob + q8_K_act::kQsOffset);
        for (int k = 0; k < kVecs; k += 4) {
            __m256i q[4];
            for (int t = 0; t < 4; ++t)
                q[t] = _mm256_min_epi32(round_to_i32(_mm256_mul_ps(s, _mm256_loadu_ps(xb + 8 * (k + t)))),
                                        _mm256_set1_epi32(127));
            _mm256_storeu_si256(reinterpret_cast<__m256i *>(qs + 8 * k), pack_i8(q));
            store_i16(ob + q8_K_act::kBsumsOffset + 2 * (k / 2), int16_t(hsum_i32(_mm256_add_epi32(q[0], q[1]))));
            store_i16(ob + q8_K_act::kBsumsOffset + 2 * (k / 2 + 1), int16_t(hsum_i32(_mm256_add_epi32(q[2], q[3]))));
        }
        store_f32(ob, 1.0f / iscale);
    }
}

}  // namespace memra::simd::MEMRA_SIMD_NS
