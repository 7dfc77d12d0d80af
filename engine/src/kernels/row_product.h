#pragma once
// One product y[n x W.rows] = x[n x W.cols] . W^T, seen as independent output rows: row r of
// the weights meets all n inputs while its bytes are in cache, and gives the same numbers
// whichever thread computes it, alone or beside other products. matmul() runs one product's
// rows in a parallel loop; matmulMany() runs several products' rows in one parallel region.
#include <cstdint>
#include <vector>

#include "kernels/int_dot.h"
#include "kernels/matrix.h"
#include "quant/int_quant.h"

namespace strata::kernels {

class RowProduct {
 public:
  enum class Path { F32, Bf16, Dequant, Integer };

  // F32 and BF16 weights, or quantized ones (dequantized, or with int8 activations when
  // `integer`). Quantizes the activations now when the integer path needs them.
  RowProduct(const Matrix& w, const float* x, int64_t n, float* y, bool integer, const IntKernels& kernels);
  // Quantized weights alone (the kernels' own tests and benchmarks).
  RowProduct(const quant::QuantizedMatrix& w, const float* x, int64_t n, float* y, bool integer,
             const IntKernels& kernels);

  int64_t rows() const { return rows_; }
  int64_t multiplyAdds() const { return rows_ * cols_ * n_; }
  // Output row r for every input. `scratch` is the calling thread's buffer for a dequantized row.
  void computeRow(int64_t r, std::vector<float>& scratch) const;

 private:
  void prepareInteger(const IntKernels& kernels);

  Path path_;
  const Matrix* matrix_ = nullptr;                // F32, Bf16
  const quant::QuantizedMatrix* quantized_ = nullptr;  // Dequant, Integer
  const float* x_;
  int64_t n_;
  float* y_;
  int64_t rows_, cols_;
  // Integer path: the activations, quantized once for all rows.
  quant::QuantizedActivations activations_;
  std::vector<int32_t> int4Offsets_;
  IntRowDot rowDot_ = nullptr;
  int groupShift_ = 0;
  int64_t blocks_ = 0;
};

}  // namespace strata::kernels
