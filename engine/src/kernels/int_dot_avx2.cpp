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

float int8Row(const IntRowArgs& a) {
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
    lanes = accumulate4<false>(lanes, reduceFour(sums[0], sums[1], sums[2], sums[3]), a, chunk * 4);
  }
  return finish(lanes);
}

float int4Row(const IntRowArgs& a) {
  const __m256i ones = _mm256_set1_epi16(1);
  const __m256i lowMask = _mm256_set1_epi8(0x0F);
  __m128 lanes[4] = {_mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps()};
  for (int64_t chunk = 0; chunk < a.paddedCols / 128; ++chunk) {
    const uint8_t* w = a.weights + chunk * 64;
    const int8_t* x = a.codes + chunk * 128;
    __m256i p[2];  // int32 lanes 0-3: block 2 * half, 4-7: block 2 * half + 1
    for (int half = 0; half < 2; ++half) {  // weight bytes 32*half..
      const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + half * 32));
      const __m256i lo = _mm256_and_si256(bytes, lowMask);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), lowMask);
      const __m256i xlo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + half * 32));
      const __m256i xhi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 64 + half * 32));
      const __m256i pairs =
          _mm256_add_epi16(_mm256_maddubs_epi16(lo, xlo), _mm256_maddubs_epi16(hi, xhi));
      p[half] = _mm256_madd_epi16(pairs, ones);
    }
    // [b0 b0 b2 b2 | b1 b1 b3 b3] after one hadd, whole block sums after two.
    const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(p[0], p[1]), _mm256_setzero_si256());
    const __m256i blocks =
        _mm256_permutevar8x32_epi32(h, _mm256_setr_epi32(0, 4, 1, 5, 0, 0, 0, 0));
    const __m128i isums =
        _mm_sub_epi32(_mm256_castsi256_si128(blocks),
                      _mm_loadu_si128(reinterpret_cast<const __m128i*>(a.int4Offsets + chunk * 4)));
    lanes[chunk % 4] = accumulate4<true>(lanes[chunk % 4], isums, a, chunk * 4);
  }
  // lanes[c] holds lane[4c .. 4c+3]: l8 = lanes 0+2 | 1+3, then l4, l2, y.
  const __m128 l4 = _mm_add_ps(_mm_add_ps(lanes[0], lanes[2]), _mm_add_ps(lanes[1], lanes[3]));
  alignas(16) float l[4];
  _mm_store_ps(l, l4);
  return (l[0] + l[2]) + (l[1] + l[3]);
}

}  // namespace

// One input at a time: this path is the fallback for CPUs without AVX-512.
void dotInt8Avx2(const IntRowArgs& a, float* out, int64_t outStride) {
  for (int i = 0; i < a.inputs; ++i) out[i * outStride] = int8Row(input(a, i));
}

void dotInt4Avx2(const IntRowArgs& a, float* out, int64_t outStride) {
  for (int i = 0; i < a.inputs; ++i) out[i * outStride] = int4Row(input(a, i));
}

}  // namespace strata::kernels
