#include "kernels/row_product.h"

#include <algorithm>
#include <cstddef>

#include "kernels/matmul.h"

namespace strata::kernels {

RowProduct::RowProduct(const Matrix& w, const float* x, int64_t n, float* y, bool integer,
                       const IntKernels& kernels)
    : x_(x), n_(n), y_(y), rows_(w.rows()), cols_(w.cols()) {
  switch (w.format()) {
    case WeightFormat::F32:
      path_ = Path::F32;
      matrix_ = &w;
      return;
    case WeightFormat::BF16:
      path_ = Path::Bf16;
      matrix_ = &w;
      return;
    case WeightFormat::Int8:
    case WeightFormat::Int4:
      quantized_ = &w.quantized();
      path_ = integer ? Path::Integer : Path::Dequant;
      if (integer) prepareInteger(kernels);
      return;
  }
}

RowProduct::RowProduct(const quant::QuantizedMatrix& w, const float* x, int64_t n, float* y,
                       bool integer, const IntKernels& kernels)
    : path_(integer ? Path::Integer : Path::Dequant), quantized_(&w), x_(x), n_(n), y_(y),
      rows_(w.rows), cols_(w.cols) {
  if (integer) prepareInteger(kernels);
}

void RowProduct::prepareInteger(const IntKernels& kernels) {
  const quant::QuantizedMatrix& w = *quantized_;
  activations_ = quant::quantizeActivations(x_, n_, w.cols, w.paddedCols, w.format);
  rowDot_ = w.format == quant::IntFormat::Int8 ? kernels.int8 : kernels.int4;
  blocks_ = w.paddedCols / quant::kBlock;
  groupShift_ = groupShiftOf(w.groupSize, w.paddedCols);
  // Int4: the kernels subtract the codes' +8 once per block, 8 * the block's activation sum.
  const std::vector<int32_t>& parts = activations_.int4Offsets;
  int4Offsets_.resize(parts.size() / 4);
  for (size_t b = 0; b < int4Offsets_.size(); ++b)
    int4Offsets_[b] = parts[4 * b] + parts[4 * b + 1] + parts[4 * b + 2] + parts[4 * b + 3];
}

void RowProduct::computeRow(int64_t r, std::vector<float>& scratch) const {
  float* yr = y_ + r;
  switch (path_) {
    case Path::F32:
      rowTimesInputs(matrix_->f32Data() + r * cols_, x_, n_, cols_, rows_, yr);
      return;
    case Path::Bf16:
      bf16RowTimesInputs(matrix_->bf16Data() + r * cols_, x_, n_, cols_, rows_, yr);
      return;
    case Path::Dequant:
      scratch.resize(static_cast<size_t>(cols_));
      quant::dequantizeRow(*quantized_, r, scratch.data());
      rowTimesInputs(scratch.data(), x_, n_, cols_, rows_, yr);
      return;
    case Path::Integer: {
      const quant::QuantizedMatrix& w = *quantized_;
      const auto* scales = static_cast<const std::byte*>(w.scaleData()) +
                           r * w.groupsPerRow() * quant::scaleWidth(w.format);
      IntRowArgs args{w.codes() + r * w.rowBytes(),
                      scales,
                      groupShift_,
                      0,
                      nullptr,
                      nullptr,
                      nullptr,
                      w.paddedCols};
      // The row meets the inputs a few at a time while its bytes are in cache.
      for (int64_t i = 0; i < n_; i += kMaxDotInputs) {
        args.inputs = static_cast<int>(std::min<int64_t>(kMaxDotInputs, n_ - i));
        args.codes = activations_.codes.data() + i * w.paddedCols;
        args.actScales = activations_.scales.data() + i * blocks_;
        if (!int4Offsets_.empty()) args.int4Offsets = int4Offsets_.data() + i * blocks_;
        rowDot_(args, yr + i * rows_, rows_);
      }
      return;
    }
  }
}

}  // namespace strata::kernels
