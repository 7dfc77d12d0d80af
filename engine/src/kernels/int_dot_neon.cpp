// Arm NEON dot-product integer kernels (compiled with -march=armv8.2-a+dotprod; chosen at run
// time only where the CPU reports asimddp). sdot multiplies signed bytes and adds groups of
// four into int32 lanes: int8 weights meet the codes directly; int4 nibbles (q + 8, 0..15) are
// valid signed bytes too and are corrected with 8 * sum(acodes), as on x86.
#include <arm_neon.h>

#include "kernels/int_dot.h"

namespace strata::kernels {
namespace {

// Weight scales of blocks first .. first + 3.
template <bool kInt4>
float32x4_t weightScales4(const IntRowArgs& a, int64_t first) {
  switch (a.groupShift) {
    case 0:
      if constexpr (kInt4)
        return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(int4Scales(a) + first), 16));
      else
        return vld1q_f32(int8Scales(a) + first);
    case 1: {
      const float s0 = weightScale<kInt4>(a, first >> 1),
                  s1 = weightScale<kInt4>(a, (first >> 1) + 1);
      const float pair[4] = {s0, s0, s1, s1};
      return vld1q_f32(pair);
    }
    default:
      return vdupq_n_f32(weightScale<kInt4>(a, first >> a.groupShift));
  }
}

// lanes += (wscale * ascale) * float(isum) for the four blocks starting at `first`.
template <bool kInt4>
float32x4_t accumulate4(float32x4_t lanes, int32x4_t isums, const IntRowArgs& a, int64_t first) {
  const float32x4_t scale =
      vmulq_f32(weightScales4<kInt4>(a, first), vld1q_f32(a.actScales + first));
  return vaddq_f32(lanes, vmulq_f32(scale, vcvtq_f32_s32(isums)));
}

// [sum(d0), sum(d1), sum(d2), sum(d3)] (integer: any order is exact).
int32x4_t blockSums(int32x4_t d0, int32x4_t d1, int32x4_t d2, int32x4_t d3) {
  return vpaddq_s32(vpaddq_s32(d0, d1), vpaddq_s32(d2, d3));
}

float int8Row(const IntRowArgs& a) {
  const auto* w = reinterpret_cast<const int8_t*>(a.weights);
  float32x4_t lanes = vdupq_n_f32(0.0f);
  for (int64_t chunk = 0; chunk < a.paddedCols / 128; ++chunk) {
    int32x4_t d[4];
    for (int k = 0; k < 4; ++k) {
      const int64_t offset = chunk * 128 + k * 32;
      d[k] = vdotq_s32(vdotq_s32(vdupq_n_s32(0), vld1q_s8(w + offset), vld1q_s8(a.codes + offset)),
                       vld1q_s8(w + offset + 16), vld1q_s8(a.codes + offset + 16));
    }
    lanes = accumulate4<false>(lanes, blockSums(d[0], d[1], d[2], d[3]), a, chunk * 4);
  }
  return (vgetq_lane_f32(lanes, 0) + vgetq_lane_f32(lanes, 1)) +
         (vgetq_lane_f32(lanes, 2) + vgetq_lane_f32(lanes, 3));
}

float int4Row(const IntRowArgs& a) {
  const uint8x16_t lowMask = vdupq_n_u8(0x0F);
  float32x4_t lanes[4] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
  for (int64_t chunk = 0; chunk < a.paddedCols / 128; ++chunk) {
    const uint8_t* w = a.weights + chunk * 64;
    const int8_t* x = a.codes + chunk * 128;
    int32x4_t d[4];
    for (int k = 0; k < 4; ++k) {  // block k: weight bytes 16k.., codes at 16k and 64 + 16k
      const uint8x16_t bytes = vld1q_u8(w + 16 * k);
      const int8x16_t lo = vreinterpretq_s8_u8(vandq_u8(bytes, lowMask));
      const int8x16_t hi = vreinterpretq_s8_u8(vshrq_n_u8(bytes, 4));
      d[k] = vdotq_s32(vdotq_s32(vdupq_n_s32(0), lo, vld1q_s8(x + 16 * k)), hi,
                       vld1q_s8(x + 64 + 16 * k));
    }
    const int32x4_t isums =
        vsubq_s32(blockSums(d[0], d[1], d[2], d[3]), vld1q_s32(a.int4Offsets + chunk * 4));
    lanes[chunk % 4] = accumulate4<true>(lanes[chunk % 4], isums, a, chunk * 4);
  }
  // lanes[c] holds lane[4c .. 4c+3]: l8 = lanes 0+2 | 1+3, l4 = their sum, then l2 and y.
  const float32x4_t l4 = vaddq_f32(vaddq_f32(lanes[0], lanes[2]), vaddq_f32(lanes[1], lanes[3]));
  return (vgetq_lane_f32(l4, 0) + vgetq_lane_f32(l4, 2)) + (vgetq_lane_f32(l4, 1) + vgetq_lane_f32(l4, 3));
}

}  // namespace

void dotInt8NeonDot(const IntRowArgs& a, float* out, int64_t outStride) {
  for (int i = 0; i < a.inputs; ++i) out[i * outStride] = int8Row(input(a, i));
}

void dotInt4NeonDot(const IntRowArgs& a, float* out, int64_t outStride) {
  for (int i = 0; i < a.inputs; ++i) out[i * outStride] = int4Row(input(a, i));
}

}  // namespace strata::kernels
