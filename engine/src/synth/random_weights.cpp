#include "synth/random_weights.h"

#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/convert.h"
#include "strata/error.h"
#include "synth/router_skew.h"

namespace strata::synth {
namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

// Standard deviations of the codes drawn below. Int8: a uniform byte with -128 mapped to 0,
// so 0 has probability 2/256 and every other code in [-127, 127] 1/256. Int4: a uniform
// nibble with 0 (code -8) mapped to 8 (code 0), likewise.
double int8CodeStd() { return std::sqrt(2.0 * (127.0 * 128.0 * 255.0 / 6.0) / 256.0); }
double int4CodeStd() { return std::sqrt(2.0 * (7.0 * 8.0 * 15.0 / 6.0) / 16.0); }

void fillBytes(Rng& rng, uint8_t* out, int64_t count) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const uint64_t v = rng.next();
    std::memcpy(out + i, &v, 8);
  }
  if (i < count) {
    const uint64_t v = rng.next();
    std::memcpy(out + i, &v, static_cast<size_t>(count - i));
  }
}

void int8Row(Rng& rng, int64_t cols, int64_t paddedCols, uint8_t* row) {
  fillBytes(rng, row, cols);
  for (int64_t c = 0; c < cols; ++c) row[c] = row[c] == 0x80 ? 0 : row[c];
  std::memset(row + cols, 0, static_cast<size_t>(paddedCols - cols));
}

// Random nibbles q + 8 in 1..15 (never 0: codes never use -8), 16 per 64-bit draw.
void int4Row(Rng& rng, int64_t cols, int64_t paddedCols, uint8_t* row) {
  const int64_t bytes = paddedCols / 2;
  constexpr uint64_t kLowBits = 0x1111111111111111ull;
  for (int64_t i = 0; i < bytes; i += 8) {
    uint64_t v = rng.next();
    const uint64_t any = v | (v >> 1) | (v >> 2) | (v >> 3);  // bit 0 of each nibble: nonzero
    v |= (~any & kLowBits) << 3;                              // zero nibble -> 8 (code 0)
    std::memcpy(row + i, &v, static_cast<size_t>(std::min<int64_t>(8, bytes - i)));
  }
  // Padding columns: code 0. Column j of a 32-column block sits in byte j % 16 of the block's
  // 16 bytes, low nibble for j < 16, high nibble otherwise (quant/int_quant.h).
  for (int64_t c = cols; c < paddedCols; ++c) {
    uint8_t& byte = row[c / 32 * 16 + c % 16];
    byte = c % 32 < 16 ? static_cast<uint8_t>((byte & 0xF0) | 0x08)
                       : static_cast<uint8_t>((byte & 0x0F) | 0x80);
  }
}

float valueOf(const ValueRule& rule, Rng& rng) {
  if (rule.kind == ValueRule::Kind::Constant) return rule.value;
  // Uniform on [-sqrt(3), sqrt(3)) has standard deviation 1.
  return static_cast<float>((2.0 * rng.uniform() - 1.0) * std::sqrt(3.0) * rule.value);
}

}  // namespace

Rng::Rng(uint64_t seed) {
  for (uint64_t& word : s_) word = splitmix64(seed);
}

uint64_t Rng::next() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1p-53; }

uint64_t streamSeed(uint64_t modelSeed, const std::string& name) {
  return XXH3_64bits_withSeed(name.data(), name.size(), modelSeed);
}

ValueRule valueRule(const convert::TensorName& tensor, const io::TensorEntry& entry) {
  using convert::TensorRole;
  if (tensor.role == TensorRole::Norm) {
    const bool bias = entry.name.ends_with(".bias");
    return {ValueRule::Kind::Constant, bias ? 0.0f : 1.0f};
  }
  if (tensor.role == TensorRole::Embedding) return {ValueRule::Kind::Random, 1.0f};
  if (tensor.role == TensorRole::Router)  // the logit scale synth/router_skew.h fits biases for
    return {ValueRule::Kind::Random,
            static_cast<float>(kRouterLogitStd / std::sqrt(double(entry.cols())))};
  return {ValueRule::Kind::Random, static_cast<float>(1.0 / std::sqrt(double(entry.cols())))};
}

void fillRows(const io::TensorEntry& e, const ValueRule& rule, uint64_t tensorSeed, int64_t row0,
              int64_t rows, std::byte* data, std::byte* scales) {
  const int64_t cols = e.cols();
  const uint64_t dataRow = e.dataBytes() / static_cast<uint64_t>(e.rows());
  const int64_t groups = io::isInteger(e.format) ? e.paddedCols / e.groupSize : 0;
  if (io::isInteger(e.format) && rule.kind != ValueRule::Kind::Random)
    throw Error("tensor '" + e.name + "': constant values cannot be stored " +
                std::string(io::quantFormatName(e.format)));
  for (int64_t i = 0; i < rows; ++i) {
    const uint64_t row = static_cast<uint64_t>(row0 + i);
    Rng rng(tensorSeed ^ (row * 0xD1B54A32D192ED03ull));
    auto* out = reinterpret_cast<uint8_t*>(data + static_cast<uint64_t>(i) * dataRow);
    switch (e.format) {
      case io::QuantFormat::Int8:
      case io::QuantFormat::Int4: {
        const bool int8 = e.format == io::QuantFormat::Int8;
        int8 ? int8Row(rng, cols, e.paddedCols, out) : int4Row(rng, cols, e.paddedCols, out);
        const float scale = static_cast<float>(rule.value / (int8 ? int8CodeStd() : int4CodeStd()));
        const auto width = static_cast<int64_t>(io::dtypeSize(e.scalesDType()));  // f32 or bf16
        const uint16_t scaleBf16 = quant::f32ToBf16(scale);
        for (int64_t g = 0; g < groups; ++g) {
          std::byte* at = scales + (i * groups + g) * width;
          const bool inside = g * e.groupSize < cols;
          if (int8) {
            const float value = inside ? scale : 0.0f;
            std::memcpy(at, &value, 4);
          } else {
            const uint16_t value = inside ? scaleBf16 : 0;
            std::memcpy(at, &value, 2);
          }
        }
        break;
      }
      case io::QuantFormat::BF16:
        for (int64_t c = 0; c < cols; ++c) {
          const uint16_t bits = quant::f32ToBf16(valueOf(rule, rng));
          std::memcpy(out + 2 * c, &bits, 2);
        }
        break;
      case io::QuantFormat::F32:
        for (int64_t c = 0; c < cols; ++c) {
          const float v = valueOf(rule, rng);
          std::memcpy(out + 4 * c, &v, 4);
        }
        break;
    }
  }
}

void storeValues(const io::TensorEntry& e, const std::vector<float>& values, std::byte* data) {
  if (static_cast<int64_t>(values.size()) != e.rows() * e.cols())
    throw Error("tensor '" + e.name + "': " + std::to_string(values.size()) +
                " values for a tensor of " + std::to_string(e.rows() * e.cols()));
  if (e.format == io::QuantFormat::F32) {
    std::memcpy(data, values.data(), values.size() * sizeof(float));
    return;
  }
  if (e.format != io::QuantFormat::BF16)
    throw Error("tensor '" + e.name + "': explicit values are stored f32 or bf16, not " +
                std::string(io::quantFormatName(e.format)));
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t bits = quant::f32ToBf16(values[i]);
    std::memcpy(data + 2 * i, &bits, 2);
  }
}

}  // namespace strata::synth
