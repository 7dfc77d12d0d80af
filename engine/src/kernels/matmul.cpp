#include "kernels/matmul.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

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

#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void addScaledRow(const float* __restrict row, const float* scales, int64_t scaleStride, int64_t n,
                  int64_t cols, float* __restrict out) {
  for (int64_t i = 0; i < n; ++i) {
    const float s = scales[i * scaleStride];
    float* __restrict o = out + i * cols;
    for (int64_t j = 0; j < cols; ++j) o[j] += s * row[j];
  }
}

void computeRows(std::span<const RowProduct> products) {
  int64_t work = 0;
  for (const RowProduct& p : products) work += p.multiplyAdds();
  const bool parallel = work >= kParallelThreshold;
  const std::vector<RowChunk> chunks = rowChunks(products, parallel ? omp_get_max_threads() : 1);
#pragma omp parallel if (parallel)
  {
    std::vector<float> scratch;  // a dequantized weight row, reused for every row of the thread
    shareRows(products, chunks, scratch);
  }
}

std::vector<RowChunk> rowChunks(std::span<const int64_t> rowCounts, int threads, int64_t rowWork) {
  int64_t total = 0;
  for (int64_t rows : rowCounts) total += rows;
  const int64_t wanted = int64_t{std::max(threads, 1)} * kChunksPerThread;
  const int64_t leastRows = kMinChunkMultiplyAdds / std::max<int64_t>(rowWork, 1);
  const int64_t tiles = (std::max(total / wanted, leastRows) + kIntTileRows - 1) / kIntTileRows;
  const int64_t size = std::max<int64_t>(tiles, 1) * kIntTileRows;
  std::vector<RowChunk> chunks;
  for (size_t p = 0; p < rowCounts.size(); ++p)
    for (int64_t begin = 0; begin < rowCounts[p]; begin += size)
      chunks.push_back({p, begin, std::min(begin + size, rowCounts[p])});
  return chunks;
}

std::vector<RowChunk> rowChunks(std::span<const RowProduct> products, int threads) {
  std::vector<int64_t> rowCounts;
  for (const RowProduct& p : products) rowCounts.push_back(p.rows());
  return rowChunks(rowCounts, threads, products.empty() ? 1 : products.front().rowMultiplyAdds());
}

void shareRows(std::span<const RowProduct> products, std::span<const RowChunk> chunks,
               std::vector<float>& scratch) {
#pragma omp for schedule(dynamic, 1) nowait
  for (size_t i = 0; i < chunks.size(); ++i)
    products[chunks[i].product].computeRows(chunks[i].begin, chunks[i].end, scratch);
}

void matmul(const Matrix& w, const float* x, int64_t n, float* y, const KernelConfig& config) {
  const RowProduct product(w, x, n, y, config.integerActivations, config.intKernels);
  computeRows({&product, 1});
}

void matmulMany(std::initializer_list<MatmulOutput> outputs, const float* x, int64_t n,
                const KernelConfig& config) {
  std::vector<RowProduct> products;
  products.reserve(outputs.size());
  for (const MatmulOutput& o : outputs) {
    if (products.empty())
      products.emplace_back(o.w, x, n, o.y, config.integerActivations, config.intKernels);
    else
      products.emplace_back(o.w, products.front(), o.y);
  }
  computeRows(products);
}

void matmulRows(const Matrix& w, const float* x, int64_t n, std::span<const RowRange> rows,
                float* y, const KernelConfig& config) {
  const RowProduct product(w, x, n, y, config.integerActivations, config.intKernels);
  int64_t total = 0;
  for (const RowRange& r : rows) total += r.end - r.begin;
#pragma omp parallel if (total * w.cols() * n >= kParallelThreshold)
  {
    std::vector<float> scratch;
    const int64_t threads = omp_get_num_threads(), thread = omp_get_thread_num();
    // This thread's share of the listed rows, counted across the ranges in order.
    const int64_t first = total * thread / threads, last = total * (thread + 1) / threads;
    int64_t offset = 0;  // listed rows before range r
    for (const RowRange& r : rows) {
      const int64_t begin = std::max(first, offset), end = std::min(last, offset + r.end - r.begin);
      if (begin < end)
        product.computeRows(r.begin + begin - offset, r.begin + end - offset, scratch);
      offset += r.end - r.begin;
    }
  }
}

}  // namespace strata::kernels
