#pragma once
// One product y[n x W.rows] = x[n x W.cols] . W^T, seen as independent output rows: row r of
// the weights meets all n inputs while its bytes are in cache, and gives the same numbers
// whichever thread computes it, alone or beside other products. matmul() runs one product's
// rows in a parallel loop; matmulMany() runs several products' rows in one parallel region.
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/int_dot.h"
#include "kernels/matrix.h"
#include "quant/int_quant.h"

namespace strata::kernels {

class RowProduct {
 public:
  // Inputs from which the rows go through the path's tile kernel, where it has one: below
  // five the row kernels' few inputs per pass were as fast or faster (int4 x0.96 at three,
  // x1.07 at four, x1.28 at five; int8 x0.85 at four, x1.26 at five; a throwaway harness).
  static constexpr int64_t kTileMinInputs = 5;

  enum class Path { F32, Bf16, Dequant, Integer };

  // F32 and BF16 weights, or quantized ones (dequantized, or with int8 activations when
  // `integer`). Quantizes the activations now when the integer path needs them.
  RowProduct(const Matrix& w, const float* x, int64_t n, float* y, bool integer, const IntKernels& kernels);
  // Quantized weights alone (the kernels' own tests and benchmarks).
  RowProduct(const quant::QuantizedMatrix& w, const float* x, int64_t n, float* y, bool integer,
             const IntKernels& kernels);
  // Another matrix against `sameInput`'s activations: their int8 quantization is shared when
  // both matrices read it in the same layout (decode's gate and up products of every expert
  // read one token), so it is computed once, and rearranged rather than computed again for
  // int4 weights after int8 ones (a shared int8 expert, then int4 routed ones). The numbers
  // are those of a product of its own.
  RowProduct(const Matrix& w, const RowProduct& sameInput, float* y);
  // Whether a product of `w` built from this one would take its prepared input: its quantized
  // activations, as they are or rearranged (the integer path, and `w` quantized with the same
  // row width, in the same format or int4 after int8), or its paired inputs (bf16 rows of the
  // same width; decode's experts all read one token).
  bool lendsInputTo(const Matrix& w) const;

  int64_t rows() const { return rows_; }
  int64_t multiplyAdds() const { return rows_ * cols_ * n_; }
  int64_t rowMultiplyAdds() const { return cols_ * n_; }
  // Output rows begin .. end - 1 for every input. `scratch` is the calling thread's buffer for
  // a dequantized row. A row's numbers do not depend on the range it is computed in.
  void computeRows(int64_t begin, int64_t end, std::vector<float>& scratch) const;
  // The same rows written elsewhere: row r's result for input i at out[i * outStride + r -
  // begin] (a slice of the rows, such as one attention head's, into a buffer of its own).
  void computeRowsInto(int64_t begin, int64_t end, float* out, int64_t outStride,
                       std::vector<float>& scratch) const;

 private:
  void selectPath(const Matrix& w);
  void prepareInteger(const RowProduct* sameInput);
  void prepareBf16(const RowProduct* sameInput);
  bool lendsInputTo(const quant::QuantizedMatrix& w) const;

  Path path_;
  const Matrix* matrix_ = nullptr;                // F32, Bf16
  const quant::QuantizedMatrix* quantized_ = nullptr;  // Dequant, Integer
  const float* x_;
  int64_t n_;
  float* y_;
  int64_t rows_, cols_;
  // Integer path: the activations, quantized once for all rows (and all products sharing them),
  // and for int4 weights the per-block offset sums the kernels subtract.
  struct IntegerInput {
    quant::QuantizedActivations activations;
    std::vector<int32_t> int4Offsets;
  };
  // Bf16 path: the inputs as paired rows meet them (bf16PairedInputs), shared like input_.
  std::shared_ptr<const std::vector<float>> paired_;
  bool integer_;
  IntKernels kernels_;
  std::shared_ptr<const IntegerInput> input_;
  IntRowDot rowDot_ = nullptr;
  IntTileDot tileDot_ = nullptr;  // rows eight at a time, from kTileMinInputs inputs
  int groupShift_ = 0;
  int64_t blocks_ = 0;
};

}  // namespace strata::kernels
