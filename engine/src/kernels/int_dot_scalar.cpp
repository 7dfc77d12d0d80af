// The scalar reference of the integer dot products (see int_dot.h for the exact arithmetic).
#include "kernels/int_dot.h"

namespace strata::kernels {
namespace {

// The shared f32 part: lane[b % 4] += (wscale * ascale) * float(isum).
void accumulate(float* lanes, const IntRowArgs& a, int64_t b, int32_t isum) {
  const float scale = a.weightScales[b >> a.groupShift] * a.actScales[b];
  lanes[b % 4] += scale * static_cast<float>(isum);
}

}  // namespace

float dotInt8Scalar(const IntRowArgs& a) {
  float lanes[4] = {0, 0, 0, 0};
  const auto* w = reinterpret_cast<const int8_t*>(a.weights);
  for (int64_t b = 0; b < a.paddedCols / 32; ++b) {
    int32_t isum = 0;
    for (int64_t c = b * 32; c < b * 32 + 32; ++c) isum += int32_t{w[c]} * a.codes[c];
    accumulate(lanes, a, b, isum);
  }
  return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
}

float dotInt4Scalar(const IntRowArgs& a) {
  float lanes[16] = {};
  for (int64_t chunk = 0; chunk < a.paddedCols / 128; ++chunk) {
    const uint8_t* w = a.weights + chunk * 64;
    const int8_t* low = a.codes + chunk * 128;  // codes meeting the low nibbles
    const int8_t* high = low + 64;               // ... and the high nibbles
    for (int j = 0; j < 16; ++j) {
      int32_t p = 0;
      for (int t = 4 * j; t < 4 * j + 4; ++t) p += (w[t] & 0x0F) * low[t] + (w[t] >> 4) * high[t];
      p -= a.int4Offsets[chunk * 16 + j];
      const int64_t b = chunk * 4 + j / 4;
      const float scale = a.weightScales[b >> a.groupShift] * a.actScales[b];
      lanes[j] += scale * static_cast<float>(p);
    }
  }
  float l8[8], l4[4], l2[2];
  for (int i = 0; i < 8; ++i) l8[i] = lanes[i] + lanes[i + 8];
  for (int i = 0; i < 4; ++i) l4[i] = l8[i] + l8[i + 4];
  for (int i = 0; i < 2; ++i) l2[i] = l4[i] + l4[i + 2];
  return l2[0] + l2[1];
}

}  // namespace strata::kernels
