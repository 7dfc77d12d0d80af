#include "kernels/exponentials.h"

#include <cstring>

namespace strata::kernels {
namespace {

// e^x as 2^n e^r, n = round(x / ln 2), |r| <= ln 2 / 2: r from ln 2 in two parts (the first
// exact in few bits, so n times it is exact), e^r from Cephes' degree-5 polynomial, 2^n built
// in the exponent bits. Arguments are clamped to [-87, 88] (e^-87 is just above the smallest
// normal float, e^88 below the largest), where n stays a normal exponent; a NaN stays one.
inline float expClamped(float x) {
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: t is then rounded to an integer
  constexpr int32_t kRoundBits = 0x4B400000;
  const float t = x * 1.44269504f + kRound;
  const float n = t - kRound;
  const float r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float expR = p * (r * r) + r + 1.0f;
  int32_t bits;  // t's bits less kRound's are n: its binade has a spacing of 1
  std::memcpy(&bits, &t, sizeof bits);
  const int32_t scaleBits = (bits - kRoundBits + 127) << 23;
  float scale;
  std::memcpy(&scale, &scaleBits, sizeof scale);
  return expR * scale;
}

}  // namespace

#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void siluTimes(float* __restrict gate, const float* __restrict up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) gate[i] = gate[i] / (1.0f + expClamped(-gate[i])) * up[i];
}

#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void softmax(float* __restrict x, int64_t n) {
  // Maximum and sum in independent lanes (a single running one waits on the last).
  constexpr int kLanes = 16;
  float maxLanes[kLanes];
  for (float& m : maxLanes) m = x[0];
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) maxLanes[l] = x[i + l] > maxLanes[l] ? x[i + l] : maxLanes[l];
  float max = x[0];
  for (; i < n; ++i) max = x[i] > max ? x[i] : max;
  for (const float m : maxLanes) max = m > max ? m : max;
  for (i = 0; i < n; ++i) x[i] = expClamped(x[i] - max);
  double sumLanes[kLanes] = {};
  for (i = 0; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) sumLanes[l] += x[i + l];
  double sum = 0.0;
  for (; i < n; ++i) sum += x[i];
  for (const double s : sumLanes) sum += s;
  const float inv = static_cast<float>(1.0 / sum);
  for (i = 0; i < n; ++i) x[i] *= inv;
}

}  // namespace strata::kernels
