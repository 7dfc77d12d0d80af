#pragma once
// 256-bit VNNI integer dot products (the arithmetic of int_dot.h), written once and compiled
// twice: int_dot_avxvnni.cpp with AVX-VNNI (VEX: Intel client CPUs without AVX-512) and
// int_dot_avx512vnni256.cpp with AVX-512 VNNI + VL (EVEX: on Zen 4, whose 512-bit units are
// two 256-bit halves, this beats the zmm kernels; `strata-cli bench kernels`). The including
// file defines STRATA_DPBUSD(acc, u8, s8) as its instruction set's vpdpbusd. Everything here has
// internal linkage, so each copy keeps its own target instructions.
//
// vpdpbusd multiplies unsigned by signed bytes, adding groups of four into int32 lanes. Int4
// codes are unsigned (q + 8), corrected with 8 * sum(acodes); int8 uses |a| * (w * sign(a)),
// safe because no code is -128.
#include <immintrin.h>

#include <cstring>

#include "kernels/int_dot.h"

#ifndef STRATA_DPBUSD
#error "define STRATA_DPBUSD(acc, unsignedBytes, signedBytes) before including int_dot_vnni256.h"
#endif

namespace strata::kernels {
namespace {  // NOLINT(google-build-namespaces): one copy per instruction set, on purpose

static_assert(kMaxDotInputs == 4, "the kernels below are written for up to four inputs");

// ---------------------------------------------------------------------------------- int4
// A pair of 128-column chunks is eight blocks, one per f32 lane: pairs alternate between
// lane[0..7] and lane[8..15] of int_dot.h. A row with an odd chunk count ends in a half pair
// whose upper four lanes add zeros, which leaves them unchanged.

// Four bf16 scales widened to f32 (exact: a shift into the top half).
__m128 widenBf16x4(__m128i bits) {
  return _mm_castsi128_ps(_mm_slli_epi32(_mm_cvtepu16_epi32(bits), 16));
}

// The row's weight scales (bf16) of blocks first .. first + 7 (upper four zero in a half
// pair); G = min(groupShift, 3).
template <int G, bool kFull>
__m256 pairWeightScales(const IntRowArgs& a, int64_t first) {
  const uint16_t* s = int4Scales(a);
  if constexpr (G >= 3) {  // one group covers the pair
    return _mm256_set1_ps(int4Scale(a, first >> a.groupShift));
  } else if constexpr (G == 2) {
    const __m128 low = _mm_set1_ps(int4Scale(a, first >> 2));
    return _mm256_setr_m128(low,
                            kFull ? _mm_set1_ps(int4Scale(a, (first >> 2) + 1)) : _mm_setzero_ps());
  } else if constexpr (G == 1) {  // four groups (two in a half pair)
    const uint16_t* p = s + (first >> 1);
    __m128i bits;
    if constexpr (kFull) {
      bits = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    } else {
      uint32_t two;
      std::memcpy(&two, p, sizeof two);
      bits = _mm_cvtsi32_si128(static_cast<int>(two));
    }
    const __m128 v = widenBf16x4(bits);
    return _mm256_permutevar8x32_ps(_mm256_castps128_ps256(v), _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3));
  } else {
    if constexpr (kFull) {  // eight scales: one widening load and a shift
      const __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + first));
      return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16));
    }
    return _mm256_zextps128_ps256(
        widenBf16x4(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(s + first))));
  }
}

template <bool kFull>
__m256 loadBlockFloats(const float* p) {
  return kFull ? _mm256_loadu_ps(p) : _mm256_zextps128_ps256(_mm_loadu_ps(p));
}

template <bool kFull>
__m256i loadBlockInts(const int32_t* p) {
  return kFull ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))
               : _mm256_zextsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// Blocks 0..7 of a pair from its four partial-sum vectors (p[q]: 128-bit lane k holds block
// 2q + k's four sums).
__m256i pairBlockSums(const __m256i p[4]) {
  // [b0 b0 b2 b2 | b1 b1 b3 b3], [b4 b4 b6 b6 | b5 b5 b7 b7], then [b0 b2 b4 b6 | b1 b3 b5 b7].
  const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(p[0], p[1]), _mm256_hadd_epi32(p[2], p[3]));
  return _mm256_permutevar8x32_epi32(h, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// Chunks c0 and c0 + 1 (only c0 unless kFull) of the row against each input.
template <int kInputs, int G, bool kFull>
__attribute__((always_inline)) inline void int4Pair(const IntRowArgs& a, int64_t c0, __m256* lanes) {
  constexpr int kLoads = kFull ? 4 : 2;  // 32-byte weight loads: two per chunk
  const __m256i lowMask = _mm256_set1_epi8(0x0F);
  __m256i lo[4], hi[4];
  prefetchAhead(a.weights + c0 * 64, 2);
  for (int q = 0; q < kLoads; ++q) {
    const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.weights + c0 * 64 + q * 32));
    lo[q] = _mm256_and_si256(bytes, lowMask);
    hi[q] = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), lowMask);
  }
  const int64_t first = c0 * 4;
  const __m256 weightScales = pairWeightScales<G, kFull>(a, first);
  for (int i = 0; i < kInputs; ++i) {
    const int8_t* x = a.codes + i * a.paddedCols + c0 * 128;
    __m256i p[4];
    for (int q = 0; q < 4; ++q) {
      if (q >= kLoads) {
        p[q] = _mm256_setzero_si256();
        continue;
      }
      // Weight bytes 32q.. meet low-nibble codes at slot (q / 2) * 128 + (q % 2) * 32 of the
      // pair and high-nibble codes 64 slots later.
      const int8_t* xq = x + (q >> 1) * 128 + (q & 1) * 32;
      const __m256i xlo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq));
      const __m256i xhi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + 64));
      p[q] = STRATA_DPBUSD(STRATA_DPBUSD(_mm256_setzero_si256(), lo[q], xlo), hi[q], xhi);
    }
    const int64_t blocks = i * (a.paddedCols / 32) + first;
    const __m256i isums = _mm256_sub_epi32(pairBlockSums(p), loadBlockInts<kFull>(a.int4Offsets + blocks));
    const __m256 scale = _mm256_mul_ps(weightScales, loadBlockFloats<kFull>(a.actScales + blocks));
    lanes[i] = _mm256_add_ps(lanes[i], _mm256_mul_ps(scale, _mm256_cvtepi32_ps(isums)));
  }
}

// The int4 fold of int_dot.h: l8 = lane[0..7] + lane[8..15], then l4, l2, y.
float foldInt4(__m256 low, __m256 high) {
  const __m256 l8 = _mm256_add_ps(low, high);
  const __m128 l4 = _mm_add_ps(_mm256_castps256_ps128(l8), _mm256_extractf128_ps(l8, 1));
  const __m128 l2 = _mm_add_ps(l4, _mm_movehl_ps(l4, l4));
  return _mm_cvtss_f32(_mm_add_ss(l2, _mm_movehdup_ps(l2)));
}

template <int kInputs, int G>
void int4Inputs(const IntRowArgs& a, float* out, int64_t outStride) {
  __m256 low[kInputs], high[kInputs];
  for (int i = 0; i < kInputs; ++i) low[i] = high[i] = _mm256_setzero_ps();
  const int64_t chunks = a.paddedCols / 128;
  int64_t c0 = 0;
  for (; c0 + 4 <= chunks; c0 += 4) {
    int4Pair<kInputs, G, true>(a, c0, low);
    int4Pair<kInputs, G, true>(a, c0 + 2, high);
  }
  // Up to three chunks left: the next pair goes to the low lanes, the one after to the high.
  if (c0 + 2 <= chunks) {
    int4Pair<kInputs, G, true>(a, c0, low);
    c0 += 2;
    if (c0 < chunks) int4Pair<kInputs, G, false>(a, c0, high);
  } else if (c0 < chunks) {
    int4Pair<kInputs, G, false>(a, c0, low);
  }
  for (int i = 0; i < kInputs; ++i) out[i * outStride] = foldInt4(low[i], high[i]);
}

template <int G>
void int4ByCount(const IntRowArgs& a, float* out, int64_t outStride) {
  switch (a.inputs) {
    case 1: return int4Inputs<1, G>(a, out, outStride);
    case 2: return int4Inputs<2, G>(a, out, outStride);
    case 3: return int4Inputs<3, G>(a, out, outStride);
    default: return int4Inputs<4, G>(a, out, outStride);
  }
}

void dotInt4Vnni256(const IntRowArgs& a, float* out, int64_t outStride) {
  switch (a.groupShift) {
    case 0: return int4ByCount<0>(a, out, outStride);
    case 1: return int4ByCount<1>(a, out, outStride);
    case 2: return int4ByCount<2>(a, out, outStride);
    default: return int4ByCount<3>(a, out, outStride);
  }
}

// ---------------------------------------------------------------------------------- int8
// A 128-column chunk is four blocks, one 32-byte load each; its four block sums update the
// four f32 lanes of int_dot.h.

// The row's weight scales of blocks first .. first + 3.
__m128 chunkWeightScales(const IntRowArgs& a, int64_t first) {
  const float* s = int8Scales(a);
  switch (a.groupShift) {
    case 0: return _mm_loadu_ps(s + first);
    case 1: return _mm_setr_ps(s[first >> 1], s[first >> 1], s[(first >> 1) + 1], s[(first >> 1) + 1]);
    default: return _mm_set1_ps(s[first >> a.groupShift]);
  }
}

float int8Row(const IntRowArgs& a) {
  __m128 lanes = _mm_setzero_ps();
  for (int64_t chunk = 0; chunk < a.paddedCols / 128; ++chunk) {
    // Without it int8 matvecs read 61-67 % of the memory bandwidth on an AVX-512 Xeon, with it
    // as much as the AVX2 and zmm kernels (`bench kernels`).
    prefetchAhead(a.weights + chunk * 128, 2);
    __m256i d[4];  // block k's eight partial sums
    for (int k = 0; k < 4; ++k) {
      const int64_t offset = chunk * 128 + k * 32;
      const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.weights + offset));
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.codes + offset));
      d[k] = STRATA_DPBUSD(_mm256_setzero_si256(), _mm256_sign_epi8(x, x), _mm256_sign_epi8(w, x));
    }
    // [b0 b1 b2 b3 | b0 b1 b2 b3] partials, then the halves added.
    const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(d[0], d[1]), _mm256_hadd_epi32(d[2], d[3]));
    const __m128i isums = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
    const __m128 scale = _mm_mul_ps(chunkWeightScales(a, chunk * 4), _mm_loadu_ps(a.actScales + chunk * 4));
    lanes = _mm_add_ps(lanes, _mm_mul_ps(scale, _mm_cvtepi32_ps(isums)));
  }
  alignas(16) float l[4];
  _mm_store_ps(l, lanes);
  return (l[0] + l[1]) + (l[2] + l[3]);
}

// One input at a time: int8 weights are signed, so the sign trick makes each input's bytes its
// own; only the weight load would be shared.
void dotInt8Vnni256(const IntRowArgs& a, float* out, int64_t outStride) {
  for (int i = 0; i < a.inputs; ++i) out[i * outStride] = int8Row(input(a, i));
}

}  // namespace
}  // namespace strata::kernels
