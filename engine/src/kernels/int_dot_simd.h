#pragma once
// The f32 part of the integer dot products with SSE (part of x86-64): four blocks' integer
// sums become four lane updates of the partial sums defined in int_dot.h.
#include <immintrin.h>

#include "kernels/int_dot.h"

namespace strata::kernels {

// Weight scales of blocks first .. first+3.
inline __m128 weightScales4(const float* scales, int groupShift, int64_t first) {
  switch (groupShift) {
    case 0: return _mm_loadu_ps(scales + first);
    case 1: {
      const float a = scales[first >> 1], b = scales[(first >> 1) + 1];
      return _mm_setr_ps(a, a, b, b);
    }
    default: return _mm_set1_ps(scales[first >> groupShift]);
  }
}

// lanes += (wscale * ascale) * float(isum) for the four blocks starting at `first`.
inline __m128 accumulate4(__m128 lanes, __m128i isum, const IntRowArgs& a, int64_t first) {
  const __m128 scale = _mm_mul_ps(weightScales4(a.weightScales, a.groupShift, first),
                                  _mm_loadu_ps(a.actScales + first));
  return _mm_add_ps(lanes, _mm_mul_ps(scale, _mm_cvtepi32_ps(isum)));
}

inline float finish(__m128 lanes) {
  alignas(16) float l[4];
  _mm_store_ps(l, lanes);
  return (l[0] + l[1]) + (l[2] + l[3]);
}

}  // namespace strata::kernels
