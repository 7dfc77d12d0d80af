#include "kernels/quant_matmul.h"

#include "kernels/matmul.h"

namespace strata::kernels {

void matmulDequant(const quant::QuantizedMatrix& w, const float* x, int64_t n, float* y) {
  const RowProduct product(w, x, n, y, /*integer=*/false, KernelConfig{}.intKernels);
  computeRows({&product, 1});
}

void matmulInteger(const quant::QuantizedMatrix& w, const float* x, int64_t n, float* y,
                   const IntKernels& kernels) {
  const RowProduct product(w, x, n, y, /*integer=*/true, kernels);
  computeRows({&product, 1});
}

}  // namespace strata::kernels
