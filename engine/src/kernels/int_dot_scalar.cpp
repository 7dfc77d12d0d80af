// The scalar reference of the integer dot products (see int_dot.h for the exact arithmetic).
#include "kernels/int_dot.h"
#include "quant/int_quant.h"

namespace strata::kernels {

float dotInt8Scalar(const IntRowArgs& a) {
  float y = 0.0f;
  const auto* w = reinterpret_cast<const int8_t*>(a.weights);
  for (int64_t b = 0; b < a.paddedCols / 32; ++b) {
    int32_t isum = 0;
    for (int64_t c = b * 32; c < b * 32 + 32; ++c) isum += int32_t{w[c]} * a.codes[c];
    y = accumulateBlocks(y, &isum, a.weightScales, a.groupSize, a.actScales, b, 1);
  }
  return y;
}

float dotInt4Scalar(const IntRowArgs& a) {
  float y = 0.0f;
  for (int64_t b = 0; b < a.paddedCols / 32; ++b) {
    const uint8_t* w = a.weights + b * 16;
    // This block's codes in the int4 activation arrangement (quant::int4ActivationSlot).
    const int8_t* chunk = a.codes + (b / 4) * 128;
    const int8_t* first = chunk + (b % 4) * 16;
    const int8_t* second = chunk + 64 + (b % 4) * 16;
    int32_t isum = 0;
    for (int j = 0; j < 16; ++j)
      isum += ((w[j] & 0x0F) - 8) * first[j] + ((w[j] >> 4) - 8) * second[j];
    y = accumulateBlocks(y, &isum, a.weightScales, a.groupSize, a.actScales, b, 1);
  }
  return y;
}

}  // namespace strata::kernels
