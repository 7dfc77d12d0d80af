// AVX2 integer dot products (compiled with -mavx2). maddubs multiplies unsigned by signed
// bytes: int4 codes are stored unsigned (q + 8) and corrected with 8 * sum(acodes); int8
// uses the sign trick |a| * (w * sign(a)), safe because no code is -128.
#include <immintrin.h>

#include "kernels/int_dot_simd.h"

namespace strata::kernels {
namespace {

// Sums of the four 8-lane int32 groups... as [b0, b1, b2, b3] where v_k holds block k.
__m128i reduceFour(__m256i v0, __m256i v1, __m256i v2, __m256i v3) {
  const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(v0, v1), _mm256_hadd_epi32(v2, v3));
  return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

}  // namespace

float dotInt8Avx2(const IntRowArgs& a) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m128 lanes = _mm_setzero_ps();
  for (int64_t chunk = 0; chunk < a.paddedCols / 128; ++chunk) {
    __m256i sums[4];
    for (int k = 0; k < 4; ++k) {
      const int64_t offset = chunk * 128 + k * 32;
      const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.weights + offset));
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.codes + offset));
      const __m256i products = _mm256_maddubs_epi16(_mm256_sign_epi8(x, x), _mm256_sign_epi8(w, x));
      sums[k] = _mm256_madd_epi16(products, ones);
    }
    lanes = accumulate4(lanes, reduceFour(sums[0], sums[1], sums[2], sums[3]), a, chunk * 4);
  }
  return finish(lanes);
}

float dotInt4Avx2(const IntRowArgs& a) {
  const __m256i ones = _mm256_set1_epi16(1);
  const __m256i lowMask = _mm256_set1_epi8(0x0F);
  __m128 lanes = _mm_setzero_ps();
  for (int64_t chunk = 0; chunk < a.paddedCols / 128; ++chunk) {
    const uint8_t* w = a.weights + chunk * 64;
    const int8_t* x = a.codes + chunk * 128;
    __m256i pair[2];  // blocks 0-1, then 2-3: lanes 0-3 the first block, 4-7 the second
    for (int half = 0; half < 2; ++half) {
      const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + half * 32));
      const __m256i lo = _mm256_and_si256(bytes, lowMask);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), lowMask);
      const __m256i xlo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + half * 32));
      const __m256i xhi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 64 + half * 32));
      const __m256i products =
          _mm256_add_epi16(_mm256_maddubs_epi16(lo, xlo), _mm256_maddubs_epi16(hi, xhi));
      pair[half] = _mm256_madd_epi16(products, ones);
    }
    // hadd(hadd(p0, p1), same) leaves block sums in lanes 0 (b0), 1 (b2), 4 (b1), 5 (b3).
    __m256i h = _mm256_hadd_epi32(pair[0], pair[1]);
    h = _mm256_hadd_epi32(h, h);
    h = _mm256_permutevar8x32_epi32(h, _mm256_setr_epi32(0, 4, 1, 5, 0, 0, 0, 0));
    const __m128i correction = _mm_slli_epi32(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(a.actSums + chunk * 4)), 3);
    lanes = accumulate4(lanes, _mm_sub_epi32(_mm256_castsi256_si128(h), correction), a, chunk * 4);
  }
  return finish(lanes);
}

}  // namespace strata::kernels
