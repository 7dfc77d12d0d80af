#include "kernels/quant_matmul.h"

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
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t r = 0; r < w.rows; ++r) {
    IntRowArgs args{w.data.data() + r * w.rowBytes(), w.scales.data() + r * w.groupsPerRow(),
                    groupShift, nullptr, nullptr, nullptr, w.paddedCols};
    for (int64_t i = 0; i < n; ++i) {
      args.codes = a.codes.data() + i * w.paddedCols;
      args.actScales = a.scales.data() + i * blocks;
      if (!a.int4Offsets.empty()) args.int4Offsets = a.int4Offsets.data() + i * w.paddedCols / 8;
      y[i * w.rows + r] = rowDot(args);
    }
  }
}

}  // namespace strata::kernels
