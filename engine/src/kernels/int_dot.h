#pragma once
// Dot products of one quantized weight row with int8-quantized activation rows.
//
// Every path computes exactly the same number, each f32 operation rounded as written, so the
// SIMD paths are bit-exact against the scalar reference:
//
// Both formats: per 32-column block b, an exact integer sum isum_b = sum(wcode * acode), then
// f32 partial sums lane[b % L] += (wscale[group(b)] * ascale[b]) * float(isum_b), with int4's
// bf16 wscale widened to f32 (exact), folded at the end in a fixed order. Several lanes break
// the chain of dependent adds.
// Int8: L = 4, y = (lane0 + lane1) + (lane2 + lane3).
// Int4: L = 16 (four chunks of four blocks, so a kernel reduces four chunks' integer sums
//   together), halves folded: l8[i] = lane[i] + lane[i+8], l4[i] = l8[i] + l8[i+4],
//   l2[i] = l4[i] + l4[i+2], y = l2[0] + l2[1]. The SIMD kernels compute isum_b as the
//   block's four int32 lanes of vpdpbusd / pmaddubsw+pmaddwd over unsigned codes (q + 8), less
//   the block's int4Offsets entry.
//
// A kernel call computes one weight row against up to kMaxDotInputs activation rows (a
// speculative verify pass or a small batch): the row's bytes are loaded and unpacked once for
// all of them. Decode does not combine rows: streaming several rows at once measured far
// slower on this project's machine than one row in address order. Many inputs (prefill) go
// through tile kernels, eight rows against every input (int_tile.h). Each input's
// number is exactly the one defined above, so it does not depend on the batch (speculative
// verification relies on that).
#include <bit>
#include <cstdint>
#include <string_view>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace strata::kernels {

inline constexpr int kMaxDotInputs = 4;

// How far ahead of its loads a SIMD kernel asks for the weights (a few rows of a decode
// matrix): the hardware prefetcher alone left the int4 kernels ~20 % short of their in-cache
// speed on Zen 4 (1 KiB: +6 %, 4 KiB: +20 %, 16 KiB: +10 %, one thread).
inline constexpr int64_t kPrefetchBytes = 4096;

#if defined(__x86_64__)
// Asks for `lines` cache lines from kPrefetchBytes past `at` (prefetcht0 is SSE: the same
// instruction in every instruction set's copy of a kernel).
__attribute__((always_inline)) inline void prefetchAhead(const uint8_t* at, int lines) {
  for (int line = 0; line < lines; ++line)
    _mm_prefetch(reinterpret_cast<const char*>(at + kPrefetchBytes + line * 64), _MM_HINT_T0);
}
#endif

struct IntRowArgs {
  const uint8_t* weights;      // one row in the quant/int_quant.h layout
  const void* weightScales;    // the row's group scales: f32 for int8 rows, bf16 for int4 rows
  int groupShift;              // group(b) = b >> groupShift (log2 of blocks per group)
  int inputs;                  // 1 .. kMaxDotInputs activation rows, stored one after another:
  const int8_t* codes;         //   paddedCols codes each, arranged for the weight format,
  const float* actScales;      //   paddedCols / 32 block scales each,
  const int32_t* int4Offsets;  //   int4 only: paddedCols / 32, per block 8 * sum(acodes)
  int64_t paddedCols;          // multiple of 128
};

inline const float* int8Scales(const IntRowArgs& a) {
  return static_cast<const float*>(a.weightScales);
}
inline const uint16_t* int4Scales(const IntRowArgs& a) {
  return static_cast<const uint16_t*>(a.weightScales);
}
// Int4 group g's scale widened (bf16 is the top half of an f32: exact).
inline float int4Scale(const IntRowArgs& a, int64_t g) {
  return std::bit_cast<float>(static_cast<uint32_t>(int4Scales(a)[g]) << 16);
}
// Group g's weight scale as f32, for kernels written once for both formats.
template <bool kInt4>
inline float weightScale(const IntRowArgs& a, int64_t g) {
  if constexpr (kInt4)
    return int4Scale(a, g);
  else
    return int8Scales(a)[g];
}

// The arguments for input i alone.
inline IntRowArgs input(const IntRowArgs& a, int i) {
  IntRowArgs one = a;
  one.inputs = 1;
  one.codes = a.codes + i * a.paddedCols;
  one.actScales = a.actScales + i * (a.paddedCols / 32);
  if (a.int4Offsets) one.int4Offsets = a.int4Offsets + i * (a.paddedCols / 32);
  return one;
}

// Writes input i's dot product with the row to out[i * outStride].
using IntRowDot = void (*)(const IntRowArgs& args, float* out, int64_t outStride);

// kIntTileRows consecutive weight rows against any number of inputs (prefill), each number
// exactly the row kernels'. `first` describes the first row and all the inputs; row r's codes
// are rowBytes * r and its scales scaleStride * r scale values further on.
inline constexpr int kIntTileRows = 8;
struct IntTileArgs {
  IntRowArgs first;
  int64_t rowBytes;
  int64_t scaleStride;
};
// Writes input i's dot product with row r to out[i * outStride + r].
using IntTileDot = void (*)(const IntTileArgs& args, float* out, int64_t outStride);

// x86-64: AVX2 (maddubs), AVX-VNNI (256-bit vpdpbusd, VEX), AVX-512 VNNI on zmm registers and
// the same 256-bit kernels as AVX-VNNI encoded for AVX-512 VNNI + VL ("avx512vnni-256": on
// CPUs whose 512-bit units are two 256-bit halves). Arm64: NEON with the dot-product extension.
enum class IntKernelPath { Scalar, Avx2, AvxVnni, Avx512Vnni, Avx512Vnni256, NeonDot };

// Every path, slowest first.
inline constexpr IntKernelPath kAllIntPaths[] = {
    IntKernelPath::Scalar,     IntKernelPath::Avx2,          IntKernelPath::AvxVnni,
    IntKernelPath::Avx512Vnni, IntKernelPath::Avx512Vnni256, IntKernelPath::NeonDot};

std::string_view pathName(IntKernelPath path);

// Whether this CPU (and this build) can run the path.
bool pathAvailable(IntKernelPath path);

// The fastest available path.
IntKernelPath bestIntPath();

struct IntKernels {
  IntKernelPath path;
  IntRowDot int8;
  IntRowDot int4;
  IntTileDot int8Tile = nullptr;  // where the path has them; else rows one by one
  IntTileDot int4Tile = nullptr;
};

// Throws strata::Error if the path is not available on this CPU.
IntKernels intKernels(IntKernelPath path);

// The path a name (pathName) stands for; throws strata::Error for an unknown name.
IntKernelPath pathNamed(std::string_view name);

// Per-ISA implementations (each file compiled with its own target flags, and only on its
// architecture).
void dotInt8Scalar(const IntRowArgs& a, float* out, int64_t outStride);
void dotInt4Scalar(const IntRowArgs& a, float* out, int64_t outStride);
void dotInt8Avx2(const IntRowArgs& a, float* out, int64_t outStride);
void dotInt4Avx2(const IntRowArgs& a, float* out, int64_t outStride);
void tileInt8Avx2(const IntTileArgs& t, float* out, int64_t outStride);
void tileInt4Avx2(const IntTileArgs& t, float* out, int64_t outStride);
void tileInt8Avx512Vnni(const IntTileArgs& t, float* out, int64_t outStride);
void tileInt4Avx512Vnni(const IntTileArgs& t, float* out, int64_t outStride);
void dotInt8AvxVnni(const IntRowArgs& a, float* out, int64_t outStride);
void dotInt4AvxVnni(const IntRowArgs& a, float* out, int64_t outStride);
void dotInt8Avx512Vnni(const IntRowArgs& a, float* out, int64_t outStride);
void dotInt4Avx512Vnni(const IntRowArgs& a, float* out, int64_t outStride);
void dotInt8Avx512Vnni256(const IntRowArgs& a, float* out, int64_t outStride);
void dotInt4Avx512Vnni256(const IntRowArgs& a, float* out, int64_t outStride);
void dotInt8NeonDot(const IntRowArgs& a, float* out, int64_t outStride);
void dotInt4NeonDot(const IntRowArgs& a, float* out, int64_t outStride);

// groupShift for a quantized matrix: blocks per group is a power of two, or the whole row.
int groupShiftOf(int64_t groupSize, int64_t paddedCols);

}  // namespace strata::kernels
