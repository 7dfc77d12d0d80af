#pragma once
// Dot products of one quantized weight row with one row of int8-quantized activations.
//
// Every path computes exactly the same number: per 32-column block b, the integer sum
// isum_b = sum(wcode * acode) (exact); four f32 partial sums, lane k taking the blocks
// b = k mod 4 in order,
//     lane[b % 4] += (wscale[group(b)] * ascale[b]) * float(isum_b)
// and finally y = (lane0 + lane1) + (lane2 + lane3), each operation rounded to f32 as written.
// Four lanes break the chain of dependent adds (SIMD paths keep them in one 128-bit
// register), and the result stays bit-exact against the scalar reference.
#include <cstdint>
#include <string_view>

namespace strata::kernels {

struct IntRowArgs {
  const uint8_t* weights;      // one row in the quant/int_quant.h layout
  const float* weightScales;   // the row's group scales
  int groupShift;              // group(b) = b >> groupShift (log2 of blocks per group)
  const int8_t* codes;         // one activation row, arranged for the weight format
  const float* actScales;      // per 32-block
  const int32_t* actSums;      // per 32-block sum of codes
  int64_t paddedCols;          // multiple of 128
};

using IntRowDot = float (*)(const IntRowArgs& args);

enum class IntKernelPath { Scalar, Avx2, Avx512Vnni };

std::string_view pathName(IntKernelPath path);

// Whether this CPU (and this build) can run the path.
bool pathAvailable(IntKernelPath path);

// The fastest available path.
IntKernelPath bestIntPath();

struct IntKernels {
  IntKernelPath path;
  IntRowDot int8;
  IntRowDot int4;
};

// Throws strata::Error if the path is not available on this CPU.
IntKernels intKernels(IntKernelPath path);

// Per-ISA implementations (each file compiled with its own target flags).
float dotInt8Scalar(const IntRowArgs& a);
float dotInt4Scalar(const IntRowArgs& a);
float dotInt8Avx2(const IntRowArgs& a);
float dotInt4Avx2(const IntRowArgs& a);
float dotInt8Avx512Vnni(const IntRowArgs& a);
float dotInt4Avx512Vnni(const IntRowArgs& a);

// groupShift for a quantized matrix: blocks per group is a power of two, or the whole row.
int groupShiftOf(int64_t groupSize, int64_t paddedCols);

}  // namespace strata::kernels
