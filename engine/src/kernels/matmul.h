#pragma once
// Dense products against weight matrices. OpenMP-parallel over output rows; callers must not
// be inside a parallel region.
#include <cstdint>

#include "kernels/matrix.h"

namespace strata::kernels {

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
