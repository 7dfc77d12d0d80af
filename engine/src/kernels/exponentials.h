#pragma once
// Decode's exponentials in the vector units: the SwiGLU of every expert's intermediate values
// and attention's softmax. std::exp is a library call per value (~3 ns, ~20 us of each decode
// layer of the synthetic medium model); these run 16, 8 or 4 values at a time and round the
// same in every copy (IEEE operations only, no FMA contraction), within 1 ulp of e^x.
#include <cstdint>

namespace strata::kernels {

// gate[i] = silu(gate[i]) * up[i], silu(x) = x / (1 + e^-x).
void siluTimes(float* gate, const float* up, int64_t n);

// x = softmax(x) over n > 0 values, in place (the sum of the exponentials in double).
void softmax(float* x, int64_t n);

}  // namespace strata::kernels
