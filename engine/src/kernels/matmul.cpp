#include "kernels/matmul.h"

#include <omp.h>

#include <cstring>
#include <vector>

#include "kernels/quant_matmul.h"
#include "quant/convert.h"

namespace strata::kernels {

Matrix Matrix::fromF32(int64_t rows, int64_t cols, std::vector<float> values) {
  Matrix m;
  m.rows_ = rows;
  m.cols_ = cols;
  m.format_ = WeightFormat::F32;
  m.f32_ = std::move(values);
  return m;
}

Matrix Matrix::toBf16(int64_t rows, int64_t cols, const std::vector<float>& values) {
  Matrix m;
  m.rows_ = rows;
  m.cols_ = cols;
  m.format_ = WeightFormat::BF16;
  m.bf16_.resize(values.size());
  for (size_t i = 0; i < values.size(); ++i) m.bf16_[i] = quant::f32ToBf16(values[i]);
  return m;
}

Matrix Matrix::fromQuantized(quant::QuantizedMatrix quantized) {
  Matrix m;
  m.rows_ = quantized.rows;
  m.cols_ = quantized.cols;
  m.format_ = quantized.format == quant::IntFormat::Int8 ? WeightFormat::Int8 : WeightFormat::Int4;
  m.quantized_ = std::move(quantized);
  return m;
}

int64_t Matrix::bytes() const {
  return static_cast<int64_t>(f32_.size() * sizeof(float) + bf16_.size() * sizeof(uint16_t)) +
         quantized_.bytes();
}

void Matrix::row(int64_t r, float* out) const {
  switch (format_) {
    case WeightFormat::F32:
      std::memcpy(out, f32_.data() + r * cols_, sizeof(float) * cols_);
      return;
    case WeightFormat::BF16:
      for (int64_t c = 0; c < cols_; ++c) out[c] = quant::bf16ToF32(bf16_[r * cols_ + c]);
      return;
    case WeightFormat::Int8:
    case WeightFormat::Int4:
      quant::dequantizeRow(quantized_, r, out);
      return;
  }
}

// One weight row against n activation rows. Built for several instruction sets; the loader
// picks the best for this CPU at start (GCC function multi-versioning), so the binary runs
// on any x86-64 without -march=native.
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void rowTimesInputs(const float* wr, const float* x, int64_t n, int64_t cols, int64_t rows,
                    float* yr) {
  for (int64_t i = 0; i < n; ++i) {
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int64_t k = 0; k < cols; ++k) sum += wr[k] * x[i * cols + k];
    yr[i * rows] = sum;
  }
}

void matmul(const Matrix& w, const float* x, int64_t n, float* y, const KernelConfig& config) {
  if (w.format() == WeightFormat::Int8 || w.format() == WeightFormat::Int4) {
    if (config.integerActivations)
      matmulInteger(w.quantized(), x, n, y, config.intKernels);
    else
      matmulDequant(w.quantized(), x, n, y);
    return;
  }
  const int64_t rows = w.rows();
  const int64_t cols = w.cols();
  const bool parallel = rows * cols * n >= kParallelThreshold;
  if (w.format() == WeightFormat::F32) {
    const float* data = w.f32Data();
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t r = 0; r < rows; ++r) rowTimesInputs(data + r * cols, x, n, cols, rows, y + r);
    return;
  }
  // Narrow formats: widen one row at a time into a per-thread buffer, then reuse it for all
  // n inputs, so the conversion cost is paid once per weight, not once per token.
#pragma omp parallel if (parallel)
  {
    std::vector<float> wr(static_cast<size_t>(cols));
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      w.row(r, wr.data());
      rowTimesInputs(wr.data(), x, n, cols, rows, y + r);
    }
  }
}

}  // namespace strata::kernels
