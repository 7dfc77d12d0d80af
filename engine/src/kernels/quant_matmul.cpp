#include "kernels/quant_matmul.h"

#include <algorithm>
#include <vector>

#include "kernels/matmul.h"

namespace strata::kernels {

void matmulDequant(const quant::QuantizedMatrix& w, const float* x, int64_t n, float* y) {
  const bool parallel = w.rows * w.cols * n >= kParallelThreshold;
#pragma omp parallel if (parallel)
  {
    std::vector<float> row(static_cast<size_t>(w.cols));
#pragma omp for schedule(static)
    for (int64_t r = 0; r < w.rows; ++r) {
      quant::dequantizeRow(w, r, row.data());
      rowTimesInputs(row.data(), x, n, w.cols, w.rows, y + r);
    }
  }
}

void matmulInteger(const quant::QuantizedMatrix& w, const float* x, int64_t n, float* y,
                   const IntKernels& kernels) {
  const quant::QuantizedActivations a =
      quant::quantizeActivations(x, n, w.cols, w.paddedCols, w.format);
  const IntRowDot rowDot = w.format == quant::IntFormat::Int8 ? kernels.int8 : kernels.int4;
  const int64_t blocks = w.paddedCols / quant::kBlock;
  const int groupShift = groupShiftOf(w.groupSize, w.paddedCols);
  const bool parallel = w.rows * w.cols * n >= kParallelThreshold;
  // Int4: the kernels subtract the codes' +8 once per block, 8 * the block's activation sum.
  std::vector<int32_t> offsets(a.int4Offsets.size() / 4);
  for (size_t b = 0; b < offsets.size(); ++b)
    offsets[b] = a.int4Offsets[4 * b] + a.int4Offsets[4 * b + 1] + a.int4Offsets[4 * b + 2] +
                 a.int4Offsets[4 * b + 3];
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t r = 0; r < w.rows; ++r) {
    IntRowArgs args{w.codes() + r * w.rowBytes(),
                    w.scaleValues() + r * w.groupsPerRow(),
                    groupShift,
                    0,
                    nullptr,
                    nullptr,
                    nullptr,
                    w.paddedCols};
    // The row meets the inputs a few at a time while its bytes are in cache.
    for (int64_t i = 0; i < n; i += kMaxDotInputs) {
      args.inputs = static_cast<int>(std::min<int64_t>(kMaxDotInputs, n - i));
      args.codes = a.codes.data() + i * w.paddedCols;
      args.actScales = a.scales.data() + i * blocks;
      if (!offsets.empty()) args.int4Offsets = offsets.data() + i * blocks;
      rowDot(args, y + i * w.rows + r, w.rows);
    }
  }
}

}  // namespace strata::kernels
