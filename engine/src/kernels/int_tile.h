#pragma once
// Tiles for many inputs (prefill): eight weight rows against every input, with the rows side
// by side in the register lanes instead of one row's columns. Included by int_tile_avx2.cpp
// (pmaddubsw + pmaddwd) and int_tile_avx512vnni.cpp (vpdpbusd on ymm registers), each compiled
// for its instruction set. Everything here has internal linkage, so each copy keeps its own
// target instructions.
//
// A row-at-a-time kernel sums each 32-column block across the lanes of a register: per block
// and input a horizontal reduction (hadd, permute) that costs as much as the multiplies. Here
// lane r of every register belongs to weight row r: a block is eight steps of four columns,
// each step one register of the eight rows' four codes (a transpose, done once per block for
// all inputs) times the input's four codes broadcast; the multiply-adds leave the eight rows'
// exact block sums in the eight lanes, with no reduction at all. The f32 part is the one
// int_dot.h defines - lane[b % L] += (wscale * ascale) * float(isum_b), folded in the same
// order - carried out for eight rows at once, so every number equals the row kernels'.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/int_dot.h"

namespace strata::kernels {
namespace {  // NOLINT(google-build-namespaces): one copy per instruction set, on purpose

// Inputs whose sums live in the accumulators at once (int4: 32 x 16 lanes x 8 rows, 16 KiB);
// each block's transpose serves them all. 32 ran 7-15 % faster than 16 in a throwaway harness
// (64-128 inputs, 768-6,144 columns), 64 no faster than 32.
constexpr int kTileInputs = 32;

inline __m256i broadcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm256_set1_epi32(v);
}

// Sixteen bytes of rows r (low half) and r + 4 (high half), for r = 0..3, transposed in
// 32-bit words: d[j] holds word j (bytes 4j..4j+3) of every row, row r in lane r.
inline void transposeWords(const uint8_t* w, int64_t rowBytes, __m256i (&d)[4]) {
  __m256i y[4];
  for (int r = 0; r < 4; ++r)
    y[r] = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + r * rowBytes))),
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + (r + 4) * rowBytes)), 1);
  const __m256i t0 = _mm256_unpacklo_epi32(y[0], y[1]), t1 = _mm256_unpackhi_epi32(y[0], y[1]);
  const __m256i t2 = _mm256_unpacklo_epi32(y[2], y[3]), t3 = _mm256_unpackhi_epi32(y[2], y[3]);
  d[0] = _mm256_unpacklo_epi64(t0, t2);
  d[1] = _mm256_unpackhi_epi64(t0, t2);
  d[2] = _mm256_unpacklo_epi64(t1, t3);
  d[3] = _mm256_unpackhi_epi64(t1, t3);
}

// Block b of the eight rows as eight steps: steps[s] holds, in lane r, row r's codes of the
// block's columns 4s .. 4s+3. Int4 (unsigned, q + 8): the block's 16 bytes per row hold
// columns 0-15 in their low nibbles and 16-31 in their high ones. Int8: 32 signed bytes.
template <bool kInt4>
inline void blockSteps(const uint8_t* rows, int64_t rowBytes, int64_t b, __m256i (&steps)[8]) {
  __m256i d[4];
  if constexpr (kInt4) {
    transposeWords(rows + b * 16, rowBytes, d);
    const __m256i lowMask = _mm256_set1_epi8(0x0F);
    for (int s = 0; s < 4; ++s) {
      steps[s] = _mm256_and_si256(d[s], lowMask);
      steps[s + 4] = _mm256_and_si256(_mm256_srli_epi16(d[s], 4), lowMask);
    }
  } else {
    for (int half = 0; half < 2; ++half) {
      transposeWords(rows + b * 32 + half * 16, rowBytes, d);
      for (int s = 0; s < 4; ++s) steps[4 * half + s] = d[s];
    }
  }
}

// The eight rows' weight scales of group g as f32 (int4's bf16 widened: exact).
template <bool kInt4>
inline __m256 rowScales(const void* scales, int64_t stride, int64_t g) {
  alignas(32) uint32_t bits[kIntTileRows];
  for (int r = 0; r < kIntTileRows; ++r) {
    if constexpr (kInt4)
      bits[r] = static_cast<uint32_t>(static_cast<const uint16_t*>(scales)[r * stride + g]) << 16;
    else
      std::memcpy(&bits[r], static_cast<const float*>(scales) + r * stride + g, sizeof(float));
  }
  return _mm256_castsi256_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(bits)));
}

// One input's exact block sums for the eight rows. Int4: unsigned codes (q + 8) times x, the
// codes' +8 going with `offset` (8 * the block's activation sum). Int8: both sides signed, so
// |w| * (x * sign w) (no code is -128). With kVnni each step is one vpdpbusd into int32 lanes.
// Without it, pmaddubsw: for int4 each int16 is at most 2 * 15 * 127 = 3810, so all eight
// steps add in int16 before one pmaddwd; for int8 each step's int16 pairs (up to 2 * 127 *
// 127) are widened by pmaddwd before they add.
template <bool kInt4, bool kVnni>
__attribute__((always_inline)) inline __m256i blockSums(const __m256i (&steps)[8],
                                                        const __m256i (&absSteps)[8],
                                                        const int8_t* x, int32_t offset) {
  auto at = [&](int s) { return x + (kInt4 && s >= 4 ? 64 + 4 * (s - 4) : 4 * s); };
  if constexpr (kVnni) {
    __m256i sums = kInt4 ? _mm256_set1_epi32(-offset) : _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int s = 0; s < 8; ++s) {
      if constexpr (kInt4)
        sums = _mm256_dpbusd_epi32(sums, steps[s], broadcast4(at(s)));
      else
        sums =
            _mm256_dpbusd_epi32(sums, absSteps[s], _mm256_sign_epi8(broadcast4(at(s)), steps[s]));
    }
    return sums;
  } else {
    const __m256i ones = _mm256_set1_epi16(1);
    if constexpr (kInt4) {
      __m256i pairs = _mm256_maddubs_epi16(steps[0], broadcast4(at(0)));
#pragma GCC unroll 8
      for (int s = 1; s < 8; ++s)
        pairs = _mm256_add_epi16(pairs, _mm256_maddubs_epi16(steps[s], broadcast4(at(s))));
      return _mm256_sub_epi32(_mm256_madd_epi16(pairs, ones), _mm256_set1_epi32(offset));
    } else {
      __m256i sums = _mm256_setzero_si256();
#pragma GCC unroll 8
      for (int s = 0; s < 8; ++s) {
        const __m256i products =
            _mm256_maddubs_epi16(absSteps[s], _mm256_sign_epi8(broadcast4(at(s)), steps[s]));
        sums = _mm256_add_epi32(sums, _mm256_madd_epi16(products, ones));
      }
      return sums;
    }
  }
}

template <bool kInt4, bool kVnni>
void tileRows(const IntTileArgs& t, float* out, int64_t outStride) {
  constexpr int kLanes = kInt4 ? 16 : 4;  // int_dot.h's L
  // Locals, not the struct's fields: the stores into `lanes` could alias those.
  const uint8_t* const weights = t.first.weights;
  const void* const scales = t.first.weightScales;
  const int8_t* const codes = t.first.codes;
  const float* const actScales = t.first.actScales;
  const int32_t* const offsets = t.first.int4Offsets;
  const int64_t paddedCols = t.first.paddedCols, rowBytes = t.rowBytes, scaleStride = t.scaleStride;
  const int groupShift = t.first.groupShift, inputs = t.first.inputs;
  const int64_t blocks = paddedCols / 32;
  alignas(32) float lanes[kTileInputs][kLanes][kIntTileRows];
  for (int first = 0; first < inputs; first += kTileInputs) {
    const int count = std::min(kTileInputs, inputs - first);
    for (int i = 0; i < count; ++i)
      for (int l = 0; l < kLanes; ++l) _mm256_store_ps(lanes[i][l], _mm256_setzero_ps());
    __m256 weightScales = _mm256_setzero_ps();
    for (int64_t b = 0; b < blocks; ++b) {
      __m256i steps[8], absSteps[8];
      blockSteps<kInt4>(weights, rowBytes, b, steps);
      if constexpr (!kInt4)
        for (int s = 0; s < 8; ++s) absSteps[s] = _mm256_abs_epi8(steps[s]);
      const int64_t group = b >> groupShift;
      if (b == 0 || group != ((b - 1) >> groupShift))
        weightScales = rowScales<kInt4>(scales, scaleStride, group);
      // Input `first`'s codes of the block (int4 arrangement: columns 0-15 of the block at x,
      // 16-31 at x + 64; int8: in order) and its entry in the per-block arrays.
      const int8_t* x =
          codes + first * paddedCols + (kInt4 ? (b >> 2) * 128 + (b & 3) * 16 : b * 32);
      const int64_t at = first * blocks + b;
      for (int i = 0; i < count; ++i, x += paddedCols) {
        const __m256i isums =
            blockSums<kInt4, kVnni>(steps, absSteps, x, kInt4 ? offsets[at + i * blocks] : 0);
        const __m256 scale =
            _mm256_mul_ps(weightScales, _mm256_set1_ps(actScales[at + i * blocks]));
        float* lane = lanes[i][b % kLanes];
        _mm256_store_ps(lane, _mm256_add_ps(_mm256_load_ps(lane),
                                            _mm256_mul_ps(scale, _mm256_cvtepi32_ps(isums))));
      }
    }
    // The folds of int_dot.h. Int4: l8[j] = lane[j] + lane[j+8], l4, l2, y = l2[0] + l2[1].
    // Int8: y = (lane0 + lane1) + (lane2 + lane3).
    for (int i = 0; i < count; ++i) {
      __m256 y;
      if constexpr (kInt4) {
        __m256 l8[8];
        for (int j = 0; j < 8; ++j)
          l8[j] = _mm256_add_ps(_mm256_load_ps(lanes[i][j]), _mm256_load_ps(lanes[i][j + 8]));
        __m256 l4[4];
        for (int j = 0; j < 4; ++j) l4[j] = _mm256_add_ps(l8[j], l8[j + 4]);
        y = _mm256_add_ps(_mm256_add_ps(l4[0], l4[2]), _mm256_add_ps(l4[1], l4[3]));
      } else {
        y = _mm256_add_ps(_mm256_add_ps(_mm256_load_ps(lanes[i][0]), _mm256_load_ps(lanes[i][1])),
                          _mm256_add_ps(_mm256_load_ps(lanes[i][2]), _mm256_load_ps(lanes[i][3])));
      }
      _mm256_storeu_ps(out + (first + i) * outStride, y);
    }
  }
}

}  // namespace
}  // namespace strata::kernels
