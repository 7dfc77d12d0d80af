#pragma once
// Dense products against weight matrices. OpenMP-parallel over output rows; callers must not
// be inside a parallel region.
#include <cstdint>

#include "kernels/matrix.h"

namespace strata::kernels {

// Below this many multiply-adds a parallel region costs more than it saves (and on a busy
// machine OpenMP barriers can cost milliseconds), so such work runs on the calling thread.
inline constexpr int64_t kParallelThreshold = int64_t{1} << 15;

// y[n x W.rows] = x[n x W.cols] . W^T
void matmul(const Matrix& w, const float* x, int64_t n, float* y);

// Dot product of two f32 vectors.
inline float dot(const float* a, const float* b, int64_t len) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < len; ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace strata::kernels
