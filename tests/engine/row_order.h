#pragma once
// rowTimesInputs' documented summation order (kernels/matmul.h, float_rows.cpp), emulated one
// float at a time: 32 partial sums over each 32-column chunk, a further 16 columns and then the
// tail into the first 16, the two halves added lane by lane, then the pairwise sum (8, 4, 2, 1
// apart). Every vector width (AVX-512, AVX2, SSE2, NEON) must give exactly this. Plain C++:
// the Arm64 cross check uses it too. Compile without FMA contraction.
namespace strata::test {

inline float documentedDot(const float* w, const float* x, int cols) {
  float a[16] = {}, b[16] = {};
  const int pairs = cols / 32 * 32;
  for (int k = 0; k < pairs; k += 32)
    for (int l = 0; l < 16; ++l) {
      a[l] += w[k + l] * x[k + l];
      b[l] += w[k + 16 + l] * x[k + 16 + l];
    }
  int start = pairs;
  if (cols - pairs >= 16) {
    for (int l = 0; l < 16; ++l) a[l] += w[pairs + l] * x[pairs + l];
    start += 16;
  }
  if (start < cols)  // lanes past the tail add zeros, as the kernels do
    for (int l = 0; l < 16; ++l) a[l] += start + l < cols ? w[start + l] * x[start + l] : 0.0f;
  float h8[8], h4[4];
  for (int l = 0; l < 8; ++l) h8[l] = (a[l] + b[l]) + (a[l + 8] + b[l + 8]);
  for (int l = 0; l < 4; ++l) h4[l] = h8[l] + h8[l + 4];
  return (h4[0] + h4[2]) + (h4[1] + h4[3]);
}

}  // namespace strata::test
