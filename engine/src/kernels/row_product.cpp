#include "kernels/row_product.h"

#include <algorithm>
#include <cstddef>

#include "kernels/matmul.h"

namespace strata::kernels {

RowProduct::RowProduct(const Matrix& w, const float* x, int64_t n, float* y, bool integer,
                       const IntKernels& kernels)
    : x_(x), n_(n), y_(y), rows_(w.rows()), cols_(w.cols()), integer_(integer), kernels_(kernels) {
  selectPath(w);
  if (path_ == Path::Integer) prepareInteger(nullptr);
  if (path_ == Path::Bf16) prepareBf16(nullptr);
}

RowProduct::RowProduct(const quant::QuantizedMatrix& w, const float* x, int64_t n, float* y,
                       bool integer, const IntKernels& kernels)
    : path_(integer ? Path::Integer : Path::Dequant),
      quantized_(&w),
      x_(x),
      n_(n),
      y_(y),
      rows_(w.rows),
      cols_(w.cols),
      integer_(integer),
      kernels_(kernels) {
  if (integer) prepareInteger(nullptr);
}

RowProduct::RowProduct(const Matrix& w, const RowProduct& sameInput, float* y)
    : x_(sameInput.x_),
      n_(sameInput.n_),
      y_(y),
      rows_(w.rows()),
      cols_(w.cols()),
      integer_(sameInput.integer_),
      kernels_(sameInput.kernels_) {
  selectPath(w);
  if (path_ == Path::Integer) prepareInteger(&sameInput);
  if (path_ == Path::Bf16) prepareBf16(&sameInput);
}

// Decode and verify passes (up to four inputs) pair their inputs; prefill keeps them as they
// are, which costs no copy of a whole chunk (AVX2 passes more than two inputs in halves,
// which do not read paired inputs).
void RowProduct::prepareBf16(const RowProduct* sameInput) {
  constexpr int64_t kMaxPairedInputs = 4;
  if (n_ > kMaxPairedInputs) return;
  if (sameInput && sameInput->paired_ && sameInput->cols_ == cols_) {
    paired_ = sameInput->paired_;
    return;
  }
  auto paired = std::make_shared<std::vector<float>>(bf16PairedInputs(x_, n_, cols_));
  if (!paired->empty()) paired_ = std::move(paired);
}

void RowProduct::selectPath(const Matrix& w) {
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
      path_ = integer_ ? Path::Integer : Path::Dequant;
      return;
  }
}

bool RowProduct::lendsInputTo(const Matrix& w) const {
  if (w.format() == WeightFormat::BF16) return paired_ && w.cols() == cols_;
  if (w.format() != WeightFormat::Int8 && w.format() != WeightFormat::Int4) return false;
  return lendsInputTo(w.quantized());
}

bool RowProduct::lendsInputTo(const quant::QuantizedMatrix& w) const {
  if (!input_ || w.cols != cols_ || w.paddedCols != quantized_->paddedCols) return false;
  return w.format == quantized_->format ||
         (quantized_->format == quant::IntFormat::Int8 && w.format == quant::IntFormat::Int4);
}

void RowProduct::prepareInteger(const RowProduct* sameInput) {
  const quant::QuantizedMatrix& w = *quantized_;
  rowDot_ = w.format == quant::IntFormat::Int8 ? kernels_.int8 : kernels_.int4;
  tileDot_ = w.format == quant::IntFormat::Int8 ? kernels_.int8Tile : kernels_.int4Tile;
  blocks_ = w.paddedCols / quant::kBlock;
  groupShift_ = groupShiftOf(w.groupSize, w.paddedCols);
  const bool lent = sameInput && sameInput->lendsInputTo(w);
  if (lent && sameInput->quantized_->format == w.format) {
    input_ = sameInput->input_;
    return;
  }
  auto input = std::make_shared<IntegerInput>();
  input->activations = lent ? quant::inInt4Order(sameInput->input_->activations)
                            : quant::quantizeActivations(x_, n_, w.cols, w.paddedCols, w.format);
  // Int4: the kernels subtract the codes' +8 once per block, 8 * the block's activation sum.
  const std::vector<int32_t>& parts = input->activations.int4Offsets;
  input->int4Offsets.resize(parts.size() / 4);
  for (size_t b = 0; b < input->int4Offsets.size(); ++b)
    input->int4Offsets[b] = parts[4 * b] + parts[4 * b + 1] + parts[4 * b + 2] + parts[4 * b + 3];
  input_ = std::move(input);
}

void RowProduct::computeRows(int64_t begin, int64_t end, std::vector<float>& scratch) const {
  computeRowsInto(begin, end, y_ + begin, rows_, scratch);
}

void RowProduct::computeRowsInto(int64_t begin, int64_t end, float* out, int64_t outStride,
                                 std::vector<float>& scratch) const {
  switch (path_) {
    case Path::F32:
      rowsTimesInputs(matrix_->f32Data() + begin * cols_, end - begin, x_, n_, cols_, outStride,
                      out);
      return;
    case Path::Bf16:
      bf16RowsTimesInputs(matrix_->bf16Data() + begin * cols_, end - begin, x_, n_, cols_,
                          outStride, out, paired_ ? paired_->data() : nullptr);
      return;
    case Path::Dequant:
      scratch.resize(static_cast<size_t>(cols_));
      for (int64_t r = begin; r < end; ++r) {
        quant::dequantizeRow(*quantized_, r, scratch.data());
        rowTimesInputs(scratch.data(), x_, n_, cols_, outStride, out + (r - begin));
      }
      return;
    case Path::Integer: {
      const quant::QuantizedMatrix& w = *quantized_;
      const int64_t groups = w.groupsPerRow();
      const int64_t scaleBytes = groups * quant::scaleWidth(w.format);
      IntRowArgs args{nullptr, nullptr, groupShift_, 0, nullptr, nullptr, nullptr, w.paddedCols};
      auto point = [&](IntRowArgs& a, int64_t r) {  // at row r and the first input
        a.weights = w.codes() + r * w.rowBytes();
        a.weightScales = static_cast<const std::byte*>(w.scaleData()) + r * scaleBytes;
        a.codes = input_->activations.codes.data();
        a.actScales = input_->activations.scales.data();
        if (!input_->int4Offsets.empty()) a.int4Offsets = input_->int4Offsets.data();
      };
      int64_t r = begin;
      // Many inputs (prefill): eight rows at a time against all of them.
      if (tileDot_ && n_ >= kTileMinInputs) {
        for (; r + kIntTileRows <= end; r += kIntTileRows) {
          IntTileArgs tile{args, w.rowBytes(), groups};
          point(tile.first, r);
          tile.first.inputs = static_cast<int>(n_);
          tileDot_(tile, out + (r - begin), outStride);
        }
      }
      // The rest row by row: one kernel call per kMaxDotInputs inputs (decode: one), which
      // meets the inputs while the row's bytes are in cache. Only the pointers step from row
      // to row, in `args` itself: finding everything through the matrix and the shared input
      // per row took ~3 % of a decode step, and a copy of the arguments per call was a
      // store-forwarding stall (GCC moved 16 bytes right after storing 8-byte fields).
      if (r == end) return;
      point(args, r);
      const int8_t* codes = args.codes;
      const float* actScales = args.actScales;
      const int32_t* int4Offsets = args.int4Offsets;
      for (float* rowOut = out + (r - begin); r < end; ++r, ++rowOut) {
        for (int64_t i = 0; i < n_; i += kMaxDotInputs) {
          args.inputs = static_cast<int>(std::min<int64_t>(kMaxDotInputs, n_ - i));
          args.codes = codes + i * w.paddedCols;
          args.actScales = actScales + i * blocks_;
          if (int4Offsets) args.int4Offsets = int4Offsets + i * blocks_;
          rowDot_(args, rowOut + i * outStride, outStride);
        }
        args.weights += w.rowBytes();
        args.weightScales = static_cast<const std::byte*>(args.weightScales) + scaleBytes;
      }
      return;
    }
  }
}

}  // namespace strata::kernels
