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
  __m256 lanes[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};  // lanes 0-7, 8-15
  const __m256i spread[2] = {_mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1),
                             _mm256_setr_epi32(2, 2, 2, 2, 3, 3, 3, 3)};
  for (int64_t chunk = 0; chunk < a.paddedCols / 128; ++chunk) {
    const uint8_t* w = a.weights + chunk * 64;
    const int8_t* x = a.codes + chunk * 128;
    const __m128 blockScales = _mm_mul_ps(weightScales4(a.weightScales, a.groupShift, chunk * 4),
                                          _mm_loadu_ps(a.actScales + chunk * 4));
    for (int half = 0; half < 2; ++half) {  // weight bytes 32*half.., lanes 8*half..
      const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + half * 32));
      const __m256i lo = _mm256_and_si256(bytes, lowMask);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), lowMask);
      const __m256i xlo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + half * 32));
      const __m256i xhi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 64 + half * 32));
      const __m256i pairs = _mm256_add_epi16(_mm256_maddubs_epi16(lo, xlo), _mm256_maddubs_epi16(hi, xhi));
      const __m256i p = _mm256_sub_epi32(
          _mm256_madd_epi16(pairs, ones),
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.int4Offsets + chunk * 16 + half * 8)));
      const __m256 scale = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(blockScales), spread[half]);
      lanes[half] = _mm256_add_ps(lanes[half], _mm256_mul_ps(scale, _mm256_cvtepi32_ps(p)));
    }
  }
  const __m256 l8 = _mm256_add_ps(lanes[0], lanes[1]);
  const __m128 l4 = _mm_add_ps(_mm256_castps256_ps128(l8), _mm256_extractf128_ps(l8, 1));
  alignas(16) float l[4];
  _mm_store_ps(l, l4);
  return (l[0] + l[2]) + (l[1] + l[3]);
}

}  // namespace strata::kernels
