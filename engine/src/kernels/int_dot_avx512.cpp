// AVX-512 VNNI integer dot products (compiled with -mavx512f -mavx512bw -mavx512vl
// -mavx512vnni). vpdpbusd multiplies unsigned by signed bytes and adds groups of four into
// int32 lanes. Int4 codes are unsigned (q + 8), corrected with 8 * sum(acodes); int8 uses
// |a| * (w negated where a < 0), safe because no code is -128.
#include <immintrin.h>

#include "kernels/int_dot_simd.h"

namespace strata::kernels {
namespace {

// Within each 128-bit lane, every int32 becomes the sum of the lane's four.
__m512i sumWithinLanes(__m512i v) {
  v = _mm512_add_epi32(v, _mm512_shuffle_epi32(v, _MM_PERM_CDAB));
  return _mm512_add_epi32(v, _mm512_shuffle_epi32(v, _MM_PERM_BADC));
}

}  // namespace

float dotInt8Avx512Vnni(const IntRowArgs& a) {
  __m128 lanes = _mm_setzero_ps();
  const __m512i zero = _mm512_setzero_si512();
  // Gathers lane 0 of each 128-bit lane of two vectors: [v0 L0..L3, v1 L0..L3].
  const __m512i gather = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 0, 0, 0, 0, 0, 0, 0);
  for (int64_t chunk = 0; chunk < a.paddedCols / 128; ++chunk) {
    __m512i sums[2];  // blocks 0-1, then 2-3; each block spans two 128-bit lanes
    for (int half = 0; half < 2; ++half) {
      const int64_t offset = chunk * 128 + half * 64;
      const __m512i w = _mm512_loadu_si512(a.weights + offset);
      const __m512i x = _mm512_loadu_si512(a.codes + offset);
      const __mmask64 negative = _mm512_movepi8_mask(x);
      const __m512i signedW = _mm512_mask_sub_epi8(w, negative, zero, w);
      sums[half] = sumWithinLanes(_mm512_dpbusd_epi32(zero, _mm512_abs_epi8(x), signedW));
    }
    const __m256i quarters = _mm512_castsi512_si256(_mm512_permutex2var_epi32(sums[0], gather, sums[1]));
    // quarters = [b0a, b0b, b1a, b1b, b2a, b2b, b3a, b3b]: add neighbours.
    __m256i blocks = _mm256_hadd_epi32(quarters, quarters);
    blocks = _mm256_permutevar8x32_epi32(blocks, _mm256_setr_epi32(0, 1, 4, 5, 0, 0, 0, 0));
    lanes = accumulate4(lanes, _mm256_castsi256_si128(blocks), a, chunk * 4);
  }
  return finish(lanes);
}

float dotInt4Avx512Vnni(const IntRowArgs& a) {
  __m512 lanes = _mm512_setzero_ps();
  const __m512i lowMask = _mm512_set1_epi8(0x0F);
  // Spreads four per-block scales over the four lanes of each block.
  const __m512i spread = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
  for (int64_t chunk = 0; chunk < a.paddedCols / 128; ++chunk) {
    const __m512i bytes = _mm512_loadu_si512(a.weights + chunk * 64);
    const __m512i lo = _mm512_and_si512(bytes, lowMask);
    const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(bytes, 4), lowMask);
    __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, _mm512_loadu_si512(a.codes + chunk * 128));
    p = _mm512_dpbusd_epi32(p, hi, _mm512_loadu_si512(a.codes + chunk * 128 + 64));
    p = _mm512_sub_epi32(p, _mm512_loadu_si512(a.int4Offsets + chunk * 16));
    const __m128 blockScales = _mm_mul_ps(weightScales4(a.weightScales, a.groupShift, chunk * 4),
                                          _mm_loadu_ps(a.actScales + chunk * 4));
    const __m512 scale = _mm512_permutexvar_ps(spread, _mm512_castps128_ps512(blockScales));
    lanes = _mm512_add_ps(lanes, _mm512_mul_ps(scale, _mm512_cvtepi32_ps(p)));
  }
  const __m256 l8 = _mm256_add_ps(_mm512_castps512_ps256(lanes), _mm512_castps512_ps256(_mm512_shuffle_f32x4(lanes, lanes, _MM_SHUFFLE(3, 2, 3, 2))));
  const __m128 l4 = _mm_add_ps(_mm256_castps256_ps128(l8), _mm256_extractf128_ps(l8, 1));
  alignas(16) float l[4];
  _mm_store_ps(l, l4);
  return (l[0] + l[2]) + (l[1] + l[3]);
}

}  // namespace strata::kernels
