#pragma once
// Dot products of one quantized weight row with one row of int8-quantized activations.
//
// Every path computes exactly the same number, each f32 operation rounded as written, so the
// SIMD paths are bit-exact against the scalar reference:
//
// Int8: per 32-column block b, isum_b = sum(wcode * acode) (exact); four f32 partial sums,
//     lane[b % 4] += (wscale[group(b)] * ascale[b]) * float(isum_b),
//   y = (lane0 + lane1) + (lane2 + lane3).
// Int4: per 128-column chunk, 16 exact integer partial sums p_j (j = 0..15), each over weight
//   bytes 4j..4j+3 of the chunk: sum((low nibble - 8) * acode_low + (high nibble - 8) *
//   acode_high), which is what one int32 lane of a vpdpbusd / pmaddubsw+pmaddwd pair holds
//   (less its int4Offsets entry). Lane j belongs to block 4 * chunk + j / 4; sixteen f32 sums
//     lane[j] += (wscale[group(b)] * ascale[b]) * float(p_j),
//   then halves folded: l8[i] = lane[i] + lane[i+8], l4[i] = l8[i] + l8[i+4],
//   l2[i] = l4[i] + l4[i+2], y = l2[0] + l2[1].
// Several lanes break the chain of dependent adds; the int4 form also needs no horizontal
// integer sums per block.
#include <cstdint>
#include <string_view>

namespace strata::kernels {

struct IntRowArgs {
  const uint8_t* weights;      // one row in the quant/int_quant.h layout
  const float* weightScales;   // the row's group scales
  int groupShift;              // group(b) = b >> groupShift (log2 of blocks per group)
  const int8_t* codes;         // one activation row, arranged for the weight format
  const float* actScales;      // per 32-block
  const int32_t* int4Offsets;  // int4 only: QuantizedActivations::int4Offsets of the row
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
