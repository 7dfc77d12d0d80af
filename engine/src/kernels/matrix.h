#pragma once
// A weight matrix [rows x cols] (Hugging Face nn.Linear layout: rows = outputs) in one of the
// formats the kernels understand. The forward pass only sees this view, so new formats
// (int8, int4 groups: the quant issue) plug in here without touching the model code.
#include <cstdint>
#include <vector>

#include "quant/int_quant.h"

namespace strata::kernels {

enum class WeightFormat {
  F32,   // exact compute path
  BF16,  // kept as stored (bf16 checkpoints), widened on the fly
  Int8,  // symmetric int8 with group scales (quant/int_quant.h)
  Int4,  // symmetric int4 with group scales, packed two per byte
};

class Matrix {
 public:
  Matrix() = default;
  static Matrix fromF32(int64_t rows, int64_t cols, std::vector<float> values);
  // Narrows f32 values that are exactly representable in bf16 (bf16 checkpoints); values
  // that are not are rounded to nearest even.
  static Matrix toBf16(int64_t rows, int64_t cols, const std::vector<float>& values);
  static Matrix fromQuantized(quant::QuantizedMatrix quantized);

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  WeightFormat format() const { return format_; }
  bool empty() const { return rows_ == 0; }
  int64_t bytes() const;

  // Writes row r as f32 (embedding lookup, absorbed attention).
  void row(int64_t r, float* out) const;
  const float* f32Data() const { return f32_.data(); }
  const uint16_t* bf16Data() const { return bf16_.data(); }
  const quant::QuantizedMatrix& quantized() const { return quantized_; }

 private:
  int64_t rows_ = 0;
  int64_t cols_ = 0;
  WeightFormat format_ = WeightFormat::F32;
  std::vector<float> f32_;
  std::vector<uint16_t> bf16_;
  quant::QuantizedMatrix quantized_;
};

}  // namespace strata::kernels
