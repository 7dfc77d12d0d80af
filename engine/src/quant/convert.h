#pragma once
// Scalar conversions from the storage dtypes of Hugging Face checkpoints to f32.
// These are the one copy of this math in the engine; kernels call them.
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace strata::quant {

// bf16 is the top half of an IEEE binary32, so widening is a shift (exact for all codes).
// Inline: a widening loop (Matrix::row, loading checkpoints) then compiles to vector shifts
// instead of a call per element (BF16 weights kept native decoded ~10x slower than f32).
inline float bf16ToF32(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}
// Rounds to nearest even; NaN stays NaN. Exact for values that came from bf16.
inline uint16_t f32ToBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}
float f16ToF32(uint16_t bits);
// Rounds to nearest even (subnormals kept, overflow to infinity); NaN stays NaN.
uint16_t f32ToF16(float value);
// FP8 E4M3 "fn" variant: bias 7, subnormals, no infinities, 0x7F/0xFF are NaN, max 448.
float fp8e4m3ToF32(uint8_t bits);

// Dequantizes an FP8 weight [rows x cols] (row-major) with block scales
// scaleInv[ceil(rows/blockRows) x ceil(cols/blockCols)]: out[r,c] = fp8(w[r,c]) * scale[r/br, c/bc].
// Despite its Hugging Face name, scale_inv is a multiplier. The last blocks may be partial.
void dequantFp8Block(const uint8_t* weights, int64_t rows, int64_t cols, const float* scaleInv,
                     int64_t blockRows, int64_t blockCols, float* out);

}  // namespace strata::quant
