// The 256-bit VNNI kernels with AVX-VNNI (VEX vpdpbusd: Alder Lake and later client CPUs).
#define STRATA_DPBUSD(acc, u, s) _mm256_dpbusd_avx_epi32((acc), (u), (s))
#include "kernels/int_dot_vnni256.h"

namespace strata::kernels {

void dotInt8AvxVnni(const IntRowArgs& a, float* out, int64_t outStride) {
  dotInt8Vnni256(a, out, outStride);
}

void dotInt4AvxVnni(const IntRowArgs& a, float* out, int64_t outStride) {
  dotInt4Vnni256(a, out, outStride);
}

}  // namespace strata::kernels
