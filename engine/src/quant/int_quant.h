#pragma once
// Integer weight formats and int8 activation quantization: the one copy of this math.
//
// Weights [rows x cols] are quantized symmetrically per group of `groupSize` consecutive
// columns of a row: scale = max|w| / qmax, q = round(w / scale), w ~= q * scale, with
// qmax = 127 (int8) or 7 (int4). Int8 scales are f32. Int4 scales are bf16 (the f32 scale
// rounded to nearest, and the codes chosen against that stored scale): with 32-column groups
// an f32 scale was a fifth of an int4 matrix's bytes, 16 bits cut it to a tenth (5 -> 4.5
// bits per weight), and bf16 keeps f32's range, so no group's scale under- or overflows.
// Codes never use -128 / -8, so negating a code cannot overflow (the SIMD sign trick relies
// on it). Rows are zero-padded to `paddedCols`, a
// multiple of both the group size and 128, so every kernel sees whole 128-column chunks.
//
// Int8 layout: one signed byte per column, row-major.
// Int4 layout: per 32-column block, 16 bytes; byte j holds column j of the block in its low
// nibble and column j+16 in its high nibble, each stored as q + 8 (0..15). Splitting a block
// into its low and high nibbles thus yields its first and second 16 columns in order.
#include <cstdint>
#include <memory>
#include <vector>

namespace strata::quant {

enum class IntFormat { Int8, Int4 };

inline constexpr int64_t kChunk = 128;    // padding unit of quantized rows
inline constexpr int64_t kBlock = 32;     // activation block (one scale per 32 values)

// Bytes of one stored scale: f32 for int8, bf16 for int4.
inline int64_t scaleWidth(IntFormat format) { return format == IntFormat::Int8 ? 4 : 2; }

// Codes and scales live either in the matrix's own vectors or, for a view, in memory that
// `owner` keeps alive (a streamed expert's read buffer: no copy). Readers use codes(),
// scaleValues() (int8) and bf16ScaleValues() (int4), which work for both.
struct QuantizedMatrix {
  IntFormat format = IntFormat::Int8;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t paddedCols = 0;
  int64_t groupSize = 0;             // columns per scale; paddedCols for per-row scales
  std::vector<uint8_t> data;         // rows * rowBytes() (empty for a view)
  std::vector<float> scales;         // int8: rows * groupsPerRow() (empty for a view)
  std::vector<uint16_t> bf16Scales;  // int4: rows * groupsPerRow() (empty for a view)
  const uint8_t* viewCodes = nullptr;
  const void* viewScales = nullptr;   // f32 (int8) or bf16 (int4)
  std::shared_ptr<const void> owner;  // keeps a view's memory alive

  int64_t rowBytes() const { return format == IntFormat::Int8 ? paddedCols : paddedCols / 2; }
  int64_t groupsPerRow() const { return paddedCols / groupSize; }
  const uint8_t* codes() const { return viewCodes ? viewCodes : data.data(); }
  // The stored scales as bytes (scaleBytes() of them), whatever their type.
  const void* scaleData() const {
    if (viewScales) return viewScales;
    return format == IntFormat::Int8 ? static_cast<const void*>(scales.data()) : bf16Scales.data();
  }
  const float* scaleValues() const { return static_cast<const float*>(scaleData()); }
  const uint16_t* bf16ScaleValues() const { return static_cast<const uint16_t*>(scaleData()); }
  // Group g of row r's scale, widened to f32.
  float scale(int64_t r, int64_t g) const;
  int64_t codeBytes() const { return rows * rowBytes(); }
  int64_t scaleBytes() const {  // (an empty matrix, e.g. an f32 Matrix's, has no group size)
    return groupSize > 0 ? rows * groupsPerRow() * scaleWidth(format) : 0;
  }
  int64_t bytes() const { return codeBytes() + scaleBytes(); }
};

// Row width after padding for `cols` columns and a group size (0: per row): a multiple of
// both kChunk and the group size. Containers plan their layout with it before quantizing.
inline int64_t quantizedPaddedCols(int64_t cols, int64_t groupSize) {
  const int64_t unit = groupSize > kChunk ? groupSize : kChunk;
  return (cols + unit - 1) / unit * unit;
}

// groupSize 0 means one scale per row; otherwise a power of two >= 32 (32, 64, 128, ...).
QuantizedMatrix quantizeMatrix(const float* weights, int64_t rows, int64_t cols, IntFormat format,
                               int64_t groupSize);

// Writes row r dequantized to f32 (cols values).
void dequantizeRow(const QuantizedMatrix& m, int64_t row, float* out);

// The signed code of column c in row r (for tests and the scalar reference).
int quantCode(const QuantizedMatrix& m, int64_t row, int64_t col);

// Activations quantized to int8 per 32-value block (scale = max|x| / 127), for the integer
// kernels. `order` arranges the codes the way the kernels for one weight format read them.
struct QuantizedActivations {
  int64_t rows = 0;
  int64_t paddedCols = 0;
  std::vector<int8_t> codes;   // rows * paddedCols
  std::vector<float> scales;   // rows * paddedCols / 32
  // Int4 order only: rows * paddedCols / 8. Entry j of a 128-column chunk is 8 times the sum
  // of the codes in slots 4j..4j+3 and 64+4j..64+4j+3 - the codes that meet the low and high
  // nibbles of weight bytes 4j..4j+3 - so a kernel removes the +8 offset of int4 codes with
  // one subtraction per partial sum.
  std::vector<int32_t> int4Offsets;
};

// Int8 weights read activation codes in natural column order. Int4 weights read each
// 128-column chunk as the first 16 columns of its four blocks, then their last 16 columns,
// matching what the low and high nibbles of 64 weight bytes hold.
QuantizedActivations quantizeActivations(const float* x, int64_t rows, int64_t cols,
                                         int64_t paddedCols, IntFormat order);
// The same activations in int4 order, from their int8-order quantization (a shared int8
// expert and int4 routed ones read one token: quantized once).
QuantizedActivations inInt4Order(const QuantizedActivations& int8Order);

// Where the int8 code of column c of a 128-column chunk sits in the int4 arrangement.
inline int64_t int4ActivationSlot(int64_t c) {
  const int64_t block = c / 32;
  const int64_t within = c % 32;
  return within < 16 ? block * 16 + within : 64 + block * 16 + (within - 16);
}

}  // namespace strata::quant
