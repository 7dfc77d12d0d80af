#pragma once
// The f32 part of the integer dot products with SSE (part of x86-64): four blocks' integer
// sums become four lane updates of the partial sums defined in int_dot.h.
#include <immintrin.h>

#include "kernels/int_dot.h"

namespace strata::kernels {

// Weight scales of blocks first .. first+3.
template <bool kInt4>
inline __m128 weightScales4(const IntRowArgs& a, int64_t first) {
  switch (a.groupShift) {
    case 0:
      if constexpr (kInt4) {
        const __m128i bits =
            _mm_loadl_epi64(reinterpret_cast<const __m128i*>(int4Scales(a) + first));
        return _mm_castsi128_ps(_mm_slli_epi32(_mm_cvtepu16_epi32(bits), 16));
      } else {
        return _mm_loadu_ps(int8Scales(a) + first);
      }
    case 1: {
      const float s0 = weightScale<kInt4>(a, first >> 1),
                  s1 = weightScale<kInt4>(a, (first >> 1) + 1);
      return _mm_setr_ps(s0, s0, s1, s1);
    }
    default:
      return _mm_set1_ps(weightScale<kInt4>(a, first >> a.groupShift));
  }
}

// lanes += (wscale * ascale) * float(isum) for the four blocks starting at `first`.
template <bool kInt4>
inline __m128 accumulate4(__m128 lanes, __m128i isum, const IntRowArgs& a, int64_t first) {
  const __m128 scale =
      _mm_mul_ps(weightScales4<kInt4>(a, first), _mm_loadu_ps(a.actScales + first));
  return _mm_add_ps(lanes, _mm_mul_ps(scale, _mm_cvtepi32_ps(isum)));
}

inline float finish(__m128 lanes) {
  alignas(16) float l[4];
  _mm_store_ps(l, lanes);
  return (l[0] + l[1]) + (l[2] + l[3]);
}

}  // namespace strata::kernels
