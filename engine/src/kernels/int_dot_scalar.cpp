// The scalar reference of the integer dot products (see int_dot.h for the exact arithmetic).
#include "kernels/int_dot.h"

namespace strata::kernels {
namespace {

// The int8 f32 part: lane[b % 4] += (wscale * ascale) * float(isum).
void accumulate(float* lanes, const IntRowArgs& a, int64_t b, int32_t isum) {
  const float scale = int8Scales(a)[b >> a.groupShift] * a.actScales[b];
  lanes[b % 4] += scale * static_cast<float>(isum);
}

float int8Row(const IntRowArgs& a) {
  const auto* w = reinterpret_cast<const int8_t*>(a.weights);
  float lanes[4] = {0, 0, 0, 0};
  for (int64_t b = 0; b < a.paddedCols / 32; ++b) {
    int32_t isum = 0;
    for (int64_t c = b * 32; c < b * 32 + 32; ++c) isum += int32_t{w[c]} * a.codes[c];
    accumulate(lanes, a, b, isum);
  }
  return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
}

float int4Row(const IntRowArgs& a) {
  float lanes[16] = {};
  for (int64_t b = 0; b < a.paddedCols / 32; ++b) {
    // Block k of a chunk: weight bytes 16k..16k+15 (low nibbles: the first 16 columns, high:
    // the last 16), meeting activation slots 16k.. and 64 + 16k.. (int4ActivationSlot).
    const int64_t chunk = b / 4, k = b % 4;
    const uint8_t* w = a.weights + chunk * 64 + 16 * k;
    const int8_t* low = a.codes + chunk * 128 + 16 * k;
    const int8_t* high = low + 64;
    int32_t isum = 0;
    for (int t = 0; t < 16; ++t) isum += (w[t] & 0x0F) * low[t] + (w[t] >> 4) * high[t];
    isum -= a.int4Offsets[b];  // the +8 of the codes
    const float scale = int4Scale(a, b >> a.groupShift) * a.actScales[b];
    lanes[b % 16] += scale * static_cast<float>(isum);
  }
  float l8[8], l4[4], l2[2];
  for (int i = 0; i < 8; ++i) l8[i] = lanes[i] + lanes[i + 8];
  for (int i = 0; i < 4; ++i) l4[i] = l8[i] + l8[i + 4];
  for (int i = 0; i < 2; ++i) l2[i] = l4[i] + l4[i + 2];
  return l2[0] + l2[1];
}

}  // namespace

void dotInt8Scalar(const IntRowArgs& a, float* out, int64_t outStride) {
  for (int i = 0; i < a.inputs; ++i) out[i * outStride] = int8Row(input(a, i));
}

void dotInt4Scalar(const IntRowArgs& a, float* out, int64_t outStride) {
  for (int i = 0; i < a.inputs; ++i) out[i * outStride] = int4Row(input(a, i));
}

}  // namespace strata::kernels
