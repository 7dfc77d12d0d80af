// The prefill tiles of int_tile.h with vpdpbusd on ymm registers (compiled for AVX-512 VNNI +
// VL): one instruction per step where AVX2 needs pmaddubsw, pmaddwd and an add.
#include "kernels/int_tile.h"

namespace strata::kernels {

void tileInt8Avx512Vnni(const IntTileArgs& t, float* out, int64_t outStride) {
  tileRows<false, true>(t, out, outStride);
}

void tileInt4Avx512Vnni(const IntTileArgs& t, float* out, int64_t outStride) {
  tileRows<true, true>(t, out, outStride);
}

}  // namespace strata::kernels
