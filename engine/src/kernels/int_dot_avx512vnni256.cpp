// The 256-bit VNNI kernels with AVX-512 VNNI + VL (EVEX vpdpbusd on ymm registers).
#define STRATA_DPBUSD(acc, u, s) _mm256_dpbusd_epi32((acc), (u), (s))
#include "kernels/int_dot_vnni256.h"

namespace strata::kernels {

void dotInt8Avx512Vnni256(const IntRowArgs& a, float* out, int64_t outStride) {
  dotInt8Vnni256(a, out, outStride);
}

void dotInt4Avx512Vnni256(const IntRowArgs& a, float* out, int64_t outStride) {
  dotInt4Vnni256(a, out, outStride);
}

}  // namespace strata::kernels
