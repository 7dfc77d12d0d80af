#include "quant/convert.h"

#include <array>
#include <bit>

namespace strata::quant {

float f16ToF32(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1Fu;
  const uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exactly representable as a (normal) binary32.
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1F) {
    // Inf (mantissa 0) or NaN; the payload moves to the top of the binary32 mantissa.
    return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
  }
  // Normal: rebias 15 -> 127 and widen the mantissa 10 -> 23 bits.
  return std::bit_cast<float>(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

uint16_t f32ToF16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u)  // NaN: keep it quiet and keep the payload's top bits
    return static_cast<uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520: inf
  if (magnitude < 0x38800000u) {  // below 2^-14: a subnormal in units of 2^-24, or zero
    if (magnitude <= 0x33000000u) return sign;  // <= 2^-25 rounds (ties to even) to zero
    const uint32_t exponent = magnitude >> 23;
    const uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exponent;
    uint32_t q = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    q += (rest > half || (rest == half && (q & 1u))) ? 1u : 0u;
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t h = (magnitude >> 13) - ((127u - 15u) << 10);
  const uint32_t rest = magnitude & 0x1fffu;
  h += (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ? 1u : 0u;  // a carry rounds up the exponent
  return static_cast<uint16_t>(sign | h);
}

namespace {

constexpr float decodeFp8e4m3(uint8_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x80u) << 24;
  const uint32_t exponent = (bits >> 3) & 0xFu;
  const uint32_t mantissa = bits & 0x7u;
  if (exponent == 0xF && mantissa == 0x7) {
    return std::bit_cast<float>(sign | 0x7FC00000u);  // the "fn" variant's only NaN codes
  }
  if (exponent == 0) {
    const float magnitude = static_cast<float>(mantissa) * 0x1p-9f;  // subnormal: m * 2^-9
    return sign ? -magnitude : magnitude;
  }
  // Normal (exponent 15 is a finite binade in "fn": up to 1.75 * 2^8 = 448).
  return std::bit_cast<float>(sign | ((exponent - 7 + 127) << 23) | (mantissa << 20));
}

constexpr std::array<float, 256> makeFp8Table() {
  std::array<float, 256> table{};
  for (int code = 0; code < 256; ++code) table[code] = decodeFp8e4m3(static_cast<uint8_t>(code));
  return table;
}

// Dequantization is a hot loop over billions of weights; a 1 KiB table beats bit fiddling.
constexpr std::array<float, 256> kFp8e4m3Table = makeFp8Table();

}  // namespace

float fp8e4m3ToF32(uint8_t bits) { return kFp8e4m3Table[bits]; }

void dequantFp8Block(const uint8_t* weights, int64_t rows, int64_t cols, const float* scaleInv,
                     int64_t blockRows, int64_t blockCols, float* out) {
  const int64_t scaleCols = (cols + blockCols - 1) / blockCols;
#pragma omp parallel for schedule(static) if (rows * cols > (int64_t{1} << 20))
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* src = weights + r * cols;
    const float* scaleRow = scaleInv + (r / blockRows) * scaleCols;
    float* dst = out + r * cols;
    // Walk the row one column block at a time so the scale is loaded once per block; the
    // last block may be narrower than blockCols.
    for (int64_t c0 = 0, b = 0; c0 < cols; c0 += blockCols, ++b) {
      const int64_t c1 = c0 + blockCols < cols ? c0 + blockCols : cols;
      const float scale = scaleRow[b];
      for (int64_t c = c0; c < c1; ++c) dst[c] = kFp8e4m3Table[src[c]] * scale;
    }
  }
}

}  // namespace strata::quant
