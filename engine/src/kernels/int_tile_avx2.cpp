// The prefill tiles of int_tile.h with pmaddubsw and pmaddwd (compiled with -mavx2).
#include "kernels/int_tile.h"

namespace strata::kernels {

void tileInt8Avx2(const IntTileArgs& t, float* out, int64_t outStride) {
  tileRows<false, false>(t, out, outStride);
}

void tileInt4Avx2(const IntTileArgs& t, float* out, int64_t outStride) {
  tileRows<true, false>(t, out, outStride);
}

}  // namespace strata::kernels
