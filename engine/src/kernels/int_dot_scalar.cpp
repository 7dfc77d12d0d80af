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
  float lanes[4] = {0, 0, 0, 0};
  for (int64_t b = 0; b < a.paddedCols / 32; ++b) {
    const uint8_t* w = a.weights + b * 16;
    // This block's codes in the int4 activation arrangement (quant::int4ActivationSlot).
    const int8_t* chunk = a.codes + (b / 4) * 128;
    const int8_t* first = chunk + (b % 4) * 16;
    const int8_t* second = chunk + 64 + (b % 4) * 16;
    int32_t isum = 0;
    for (int j = 0; j < 16; ++j)
      isum += ((w[j] & 0x0F) - 8) * first[j] + ((w[j] >> 4) - 8) * second[j];
    accumulate(lanes, a, b, isum);
  }
  return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
}

}  // namespace strata::kernels
