#include "quant/int_quant.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "quant/convert.h"
#include "strata/error.h"

namespace strata::quant {
namespace {

int qmaxOf(IntFormat format) { return format == IntFormat::Int8 ? 127 : 7; }

// Symmetric code of v with the given scale; 0 scale means an all-zero group.
int encode(float v, float scale, int qmax) {
  if (scale == 0.0f) return 0;
  const float q = std::nearbyint(v / scale);
  return static_cast<int>(std::clamp(q, static_cast<float>(-qmax), static_cast<float>(qmax)));
}

// Blocks of 32 activations, `blocks` of them in one call (a call per block cost ~1.8x as long;
// the exact divisions are most of what is left): each block's scale and its codes in column
// order (the same arithmetic as encode(): exact division, round to nearest even, clamp).
// Decode quantizes every activation row once per matmul, so this is built for AVX2 too. Not
// for AVX-512: GCC 12's avx512f clone of a former per-block version returned its scale through
// a 512-bit move into zmm0 and no vzeroupper, leaving the upper state dirty, and every SSE
// instruction after it (the SwiGLU's expf, ...) ran ~30x slower on an AVX-512 Xeon until the
// next kernel's vzeroupper: in-memory decode of the synthetic medium model lost ~15 % of its
// time to it.
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx2", "default")))
#endif
void quantizeBlocks(const float* __restrict x, int64_t blocks, int8_t* __restrict codes,
                    float* __restrict scales) {
  for (int64_t b = 0; b < blocks; ++b, x += kBlock, codes += kBlock) {
    // The largest magnitude in eight independent lanes (one running maximum waits on the last
    // compare). A maximum does not depend on the order it is taken in; a NaN is skipped.
    constexpr int kLanes = 8;
    float lanes[kLanes] = {};
    for (int c = 0; c < kBlock; c += kLanes)
      for (int l = 0; l < kLanes; ++l) {
        const float a = std::fabs(x[c + l]);
        lanes[l] = a > lanes[l] ? a : lanes[l];
      }
    float amax = 0.0f;
    for (const float a : lanes) amax = a > amax ? a : amax;
    const float scale = amax / 127.0f;
    scales[b] = scale;
    float q[kBlock];
    for (int c = 0; c < kBlock; ++c) {
      const float v = std::nearbyint(x[c] / scale);
      q[c] = scale == 0.0f ? 0.0f : v < -127.0f ? -127.0f : v > 127.0f ? 127.0f : v;
    }
    for (int c = 0; c < kBlock; ++c) codes[c] = static_cast<int8_t>(static_cast<int32_t>(q[c]));
  }
}

}  // namespace

QuantizedMatrix quantizeMatrix(const float* weights, int64_t rows, int64_t cols, IntFormat format,
                               int64_t groupSize) {
  if (rows <= 0 || cols <= 0) throw Error("quantizeMatrix: empty matrix");
  const bool powerOfTwo = groupSize > 0 && (groupSize & (groupSize - 1)) == 0;
  if (groupSize != 0 && !(powerOfTwo && groupSize >= kBlock))
    throw Error("quantizeMatrix: group size " + std::to_string(groupSize) +
                " is not supported; use 0 (per row) or a power of two >= 32 (32, 64, 128, ...)");
  QuantizedMatrix m;
  m.format = format;
  m.rows = rows;
  m.cols = cols;
  m.paddedCols = quantizedPaddedCols(cols, groupSize);
  m.groupSize = groupSize == 0 ? m.paddedCols : groupSize;
  m.data.assign(static_cast<size_t>(rows * m.rowBytes()), 0);
  if (format == IntFormat::Int8)
    m.scales.assign(static_cast<size_t>(rows * m.groupsPerRow()), 0.0f);
  else
    m.bf16Scales.assign(static_cast<size_t>(rows * m.groupsPerRow()), 0);
  const int qmax = qmaxOf(format);

  for (int64_t r = 0; r < rows; ++r) {
    const float* w = weights + r * cols;
    uint8_t* out = m.data.data() + r * m.rowBytes();
    for (int64_t g = 0; g < m.groupsPerRow(); ++g) {
      const int64_t begin = g * m.groupSize;
      const int64_t end = std::min(begin + m.groupSize, cols);
      float amax = 0.0f;
      for (int64_t c = begin; c < end; ++c) amax = std::max(amax, std::fabs(w[c]));
      float scale = amax / static_cast<float>(qmax);
      const auto at = static_cast<size_t>(r * m.groupsPerRow() + g);
      if (format == IntFormat::Int8) {
        m.scales[at] = scale;
      } else {
        m.bf16Scales[at] = f32ToBf16(scale);
        scale = bf16ToF32(m.bf16Scales[at]);  // codes against the scale the kernels will use
      }
      for (int64_t c = begin; c < end; ++c) {
        const int q = encode(w[c], scale, qmax);
        if (format == IntFormat::Int8) {
          out[c] = static_cast<uint8_t>(static_cast<int8_t>(q));
        } else {
          const int64_t block = c / kBlock;
          const int64_t within = c % kBlock;
          uint8_t& byte = out[block * 16 + within % 16];
          const auto nibble = static_cast<uint8_t>(q + 8);
          byte = within < 16 ? static_cast<uint8_t>((byte & 0xF0) | nibble)
                             : static_cast<uint8_t>((byte & 0x0F) | (nibble << 4));
        }
      }
    }
    // Padding columns hold code 0: int4 stores it as nibble 8.
    if (format == IntFormat::Int4)
      for (int64_t c = cols; c < m.paddedCols; ++c) {
        const int64_t within = c % kBlock;
        uint8_t& byte = out[(c / kBlock) * 16 + within % 16];
        byte = within < 16 ? static_cast<uint8_t>((byte & 0xF0) | 8) : static_cast<uint8_t>((byte & 0x0F) | 0x80);
      }
  }
  return m;
}

int quantCode(const QuantizedMatrix& m, int64_t row, int64_t col) {
  const uint8_t* data = m.codes() + row * m.rowBytes();
  if (m.format == IntFormat::Int8) return static_cast<int8_t>(data[col]);
  const int64_t within = col % kBlock;
  const uint8_t byte = data[(col / kBlock) * 16 + within % 16];
  return (within < 16 ? (byte & 0x0F) : (byte >> 4)) - 8;
}

float QuantizedMatrix::scale(int64_t r, int64_t g) const {
  const int64_t at = r * groupsPerRow() + g;
  return format == IntFormat::Int8 ? scaleValues()[at] : bf16ToF32(bf16ScaleValues()[at]);
}

namespace {

// One row's codes times their scales, in whole 32-column blocks (one scale each, the group's),
// the last one cut to `cols`. Straight loops over a block that the compiler vectorizes for
// each target: attention widens kv_b's rows with it on every decode step.
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void dequantizeCodes(const uint8_t* data, bool int8, const void* scales, int64_t blocksPerGroup,
                     int64_t cols, float* out) {
  const int64_t blocks = (cols + kBlock - 1) / kBlock;
  for (int64_t block = 0; block < blocks; ++block) {
    const int64_t group = block / blocksPerGroup;
    const float scale = int8 ? static_cast<const float*>(scales)[group]
                             : bf16ToF32(static_cast<const uint16_t*>(scales)[group]);
    // Full blocks straight into `out`; the last, partial one through a buffer.
    float partial[kBlock];
    const bool full = (block + 1) * kBlock <= cols;
    float* values = full ? out + block * kBlock : partial;
    if (int8) {
      const auto* codes = reinterpret_cast<const int8_t*>(data + block * kBlock);
      for (int j = 0; j < kBlock; ++j) values[j] = static_cast<float>(codes[j]) * scale;
    } else {
      const uint8_t* bytes = data + block * 16;
      for (int j = 0; j < 16; ++j) {
        values[j] = static_cast<float>((bytes[j] & 0x0F) - 8) * scale;
        values[j + 16] = static_cast<float>((bytes[j] >> 4) - 8) * scale;
      }
    }
    if (!full) std::copy(partial, partial + (cols - block * kBlock), out + block * kBlock);
  }
}

}  // namespace

void dequantizeRow(const QuantizedMatrix& m, int64_t row, float* out) {
  const bool int8 = m.format == IntFormat::Int8;
  const int64_t groups = m.groupsPerRow();
  const void* scales = int8 ? static_cast<const void*>(m.scaleValues() + row * groups)
                            : static_cast<const void*>(m.bf16ScaleValues() + row * groups);
  dequantizeCodes(m.codes() + row * m.rowBytes(), int8, scales, m.groupSize / kBlock, m.cols, out);
}

QuantizedActivations quantizeActivations(const float* x, int64_t rows, int64_t cols,
                                         int64_t paddedCols, IntFormat order) {
  QuantizedActivations a;
  a.rows = rows;
  a.paddedCols = paddedCols;
  const int64_t blocks = paddedCols / kBlock;
  const int64_t whole = std::min(cols / kBlock, blocks);
  a.codes.resize(static_cast<size_t>(rows * paddedCols));
  a.scales.resize(static_cast<size_t>(rows * blocks));
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    int8_t* codes = a.codes.data() + r * paddedCols;
    float* scales = a.scales.data() + r * blocks;
    quantizeBlocks(xr, whole, codes, scales);
    // A partial block and the padding as zero-padded copies: a 0 changes no block's maximum
    // and gets code 0 (a block of padding: scale 0).
    for (int64_t b = whole; b < blocks; ++b) {
      const int64_t begin = b * kBlock;
      const int64_t count = std::max<int64_t>(0, std::min(begin + kBlock, cols) - begin);
      float padded[kBlock] = {};
      std::copy(xr + begin, xr + begin + count, padded);
      quantizeBlocks(padded, 1, codes + begin, scales + b);
    }
  }
  return order == IntFormat::Int4 ? inInt4Order(a) : a;
}

QuantizedActivations inInt4Order(const QuantizedActivations& int8Order) {
  QuantizedActivations a;
  a.rows = int8Order.rows;
  a.paddedCols = int8Order.paddedCols;
  a.scales = int8Order.scales;
  a.codes.resize(int8Order.codes.size());
  const int64_t n = a.rows * a.paddedCols;
  for (int64_t begin = 0; begin < n; begin += kBlock) {  // each block's first 16, its last 16
    const int8_t* block = int8Order.codes.data() + begin;
    int8_t* chunk = a.codes.data() + (begin / kChunk) * kChunk + (begin % kChunk) / kBlock * 16;
    std::copy(block, block + 16, chunk);
    std::copy(block + 16, block + kBlock, chunk + 64);
  }
  a.int4Offsets.assign(static_cast<size_t>(n / 8), 0);
  for (int64_t chunk = 0; chunk < n / kChunk; ++chunk) {
    const int8_t* codes = a.codes.data() + chunk * kChunk;
    int32_t* offsets = a.int4Offsets.data() + chunk * kChunk / 8;
    for (int j = 0; j < 16; ++j) {
      int32_t sum = 0;
      for (int t = 0; t < 4; ++t) sum += codes[4 * j + t] + codes[64 + 4 * j + t];
      offsets[j] = 8 * sum;
    }
  }
  return a;
}

}  // namespace strata::quant
