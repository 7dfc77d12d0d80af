// AVX-512 VNNI integer dot products (compiled with -mavx512f -mavx512bw -mavx512vl
// -mavx512vnni). vpdpbusd multiplies unsigned by signed bytes and adds groups of four into
// int32 lanes. Int4 codes are unsigned (q + 8), corrected with 8 * sum(acodes); int8 uses
// |a| * (w negated where a < 0), safe because no code is -128.
//
// One weight row, streamed in address order, meets up to four inputs: its bytes are loaded,
// unpacked and its scales spread once per chunk for all of them.
#include <immintrin.h>

#include "kernels/int_dot.h"

namespace strata::kernels {
namespace {

static_assert(kMaxDotInputs == 4, "the kernels below are written for up to four inputs");

// Int8: how the row's group scales meet the four 32-blocks of a 128-column chunk.
enum class Groups { PerBlock, PerPair, Wider };  // groupShift 0, 1, >= 2

Groups groupsOf(int groupShift) {
  return groupShift == 0 ? Groups::PerBlock : groupShift == 1 ? Groups::PerPair : Groups::Wider;
}

// Lane i takes element i / 4: four per-block values spread over the four lanes of each block.
__m512 spreadFour(__m128 v) {
  const __m512i index = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
  return _mm512_permutexvar_ps(index, _mm512_castps128_ps512(v));
}

// The row's weight scales of the chunk's four blocks.
template <Groups g>
__m128 blockScales(const IntRowArgs& a, int64_t chunk) {
  const float* s = int8Scales(a);
  if constexpr (g == Groups::PerBlock)
    return _mm_loadu_ps(s + chunk * 4);
  else if constexpr (g == Groups::PerPair)
    return _mm_setr_ps(s[chunk * 2], s[chunk * 2], s[chunk * 2 + 1], s[chunk * 2 + 1]);
  else
    return _mm_set1_ps(s[(chunk * 4) >> a.groupShift]);
}

// Int4 runs quads of four chunks: 16 blocks, one per f32 lane (int_dot.h's lane[b % 16]).
// G = min(groupShift, 4); the row's weight scales of the quad's blocks (bf16, widened), zero
// past `blocks`.
template <int G>
__m512 quadWeightScales(const IntRowArgs& a, int64_t first, int blocks) {
  if constexpr (G == 4) {  // a group spans the whole quad
    return _mm512_set1_ps(int4Scale(a, first >> a.groupShift));
  } else {
    const int groups = (blocks + (1 << G) - 1) >> G;
    const __m256i bits = _mm256_maskz_loadu_epi16(static_cast<__mmask16>((1u << groups) - 1),
                                                  int4Scales(a) + (first >> G));
    const __m512 v = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
    if constexpr (G == 0) return v;
    const __m512i index =
        _mm512_setr_epi32(0 >> G, 1 >> G, 2 >> G, 3 >> G, 4 >> G, 5 >> G, 6 >> G, 7 >> G, 8 >> G,
                          9 >> G, 10 >> G, 11 >> G, 12 >> G, 13 >> G, 14 >> G, 15 >> G);
    return _mm512_permutexvar_ps(index, v);
  }
}

// Block sums of four chunks' partial sums (p[q]: 128-bit lane k holds block k's four), with
// block k of chunk q in lane 4q + k.
__m512i quadBlockSums(const __m512i p[4]) {
  const __m512i t0 =
      _mm512_add_epi32(_mm512_unpacklo_epi32(p[0], p[1]), _mm512_unpackhi_epi32(p[0], p[1]));
  const __m512i t1 =
      _mm512_add_epi32(_mm512_unpacklo_epi32(p[2], p[3]), _mm512_unpackhi_epi32(p[2], p[3]));
  // Lane 4k + q: block k of chunk q.
  const __m512i u = _mm512_add_epi32(_mm512_unpacklo_epi64(t0, t1), _mm512_unpackhi_epi64(t0, t1));
  return _mm512_permutexvar_epi32(
      _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), u);
}

// The int4 fold of int_dot.h: l8, l4, l2, y.
float foldInt4(__m512 lanes) {
  const __m256 l8 =
      _mm256_add_ps(_mm512_castps512_ps256(lanes),
                    _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(lanes), 1)));
  const __m128 l4 = _mm_add_ps(_mm256_castps256_ps128(l8), _mm256_extractf128_ps(l8, 1));
  const __m128 l2 = _mm_add_ps(l4, _mm_movehl_ps(l4, l4));
  return _mm_cvtss_f32(_mm_add_ss(l2, _mm_movehdup_ps(l2)));
}

// Chunks c0 .. c0 + valid - 1 of the row against each input; a short quad adds zeros to the
// missing blocks' lanes, which leaves them unchanged.
template <int kInputs, int G>
__attribute__((always_inline)) inline void int4Quad(const IntRowArgs& a, int64_t c0, int valid,
                                                    __m512* lanes) {
  const __m512i lowMask = _mm512_set1_epi8(0x0F);
  __m512i lo[4], hi[4];
  prefetchAhead(a.weights + c0 * 64, 4);
  for (int q = 0; q < valid; ++q) {
    const __m512i bytes = _mm512_loadu_si512(a.weights + (c0 + q) * 64);
    lo[q] = _mm512_and_si512(bytes, lowMask);
    hi[q] = _mm512_and_si512(_mm512_srli_epi16(bytes, 4), lowMask);
  }
  const __m512 weightScales = quadWeightScales<G>(a, c0 * 4, valid * 4);
  const auto blockMask = static_cast<__mmask16>((1u << (valid * 4)) - 1);
  for (int i = 0; i < kInputs; ++i) {
    const int8_t* x = a.codes + i * a.paddedCols + c0 * 128;
    __m512i p[4];
    for (int q = 0; q < 4; ++q) {
      if (q >= valid) {
        p[q] = _mm512_setzero_si512();
        continue;
      }
      p[q] = _mm512_dpbusd_epi32(
          _mm512_dpbusd_epi32(_mm512_setzero_si512(), lo[q], _mm512_loadu_si512(x + q * 128)),
          hi[q], _mm512_loadu_si512(x + q * 128 + 64));
    }
    const __m512i isums = _mm512_sub_epi32(
        quadBlockSums(p),
        _mm512_maskz_loadu_epi32(blockMask, a.int4Offsets + i * (a.paddedCols / 32) + c0 * 4));
    const __m512 actScales =
        _mm512_maskz_loadu_ps(blockMask, a.actScales + i * (a.paddedCols / 32) + c0 * 4);
    const __m512 scale = _mm512_mul_ps(weightScales, actScales);
    lanes[i] = _mm512_add_ps(lanes[i], _mm512_mul_ps(scale, _mm512_cvtepi32_ps(isums)));
  }
}

template <int kInputs, int G>
void int4Inputs(const IntRowArgs& a, float* out, int64_t outStride) {
  __m512 lanes[kInputs];
  for (auto& l : lanes) l = _mm512_setzero_ps();
  const int64_t chunks = a.paddedCols / 128;
  int64_t c0 = 0;
  for (; c0 + 4 <= chunks; c0 += 4) int4Quad<kInputs, G>(a, c0, 4, lanes);
  if (c0 < chunks) int4Quad<kInputs, G>(a, c0, static_cast<int>(chunks - c0), lanes);
  for (int i = 0; i < kInputs; ++i) out[i * outStride] = foldInt4(lanes[i]);
}

// Int8, one input: the four block sums of a chunk from its two vpdpbusd results (d0: blocks
// 0-1, d1: blocks 2-3, eight int32 lanes per block), in block order.
__m128i int8BlockSums(__m512i d0, __m512i d1) {
  // Per 128-bit lane: [d0 pair, d1 pair, d0 pair, d1 pair] sums, then the whole lane's.
  __m512i t = _mm512_add_epi32(_mm512_unpacklo_epi32(d0, d1), _mm512_unpackhi_epi32(d0, d1));
  t = _mm512_add_epi32(t, _mm512_shuffle_epi32(t, _MM_PERM_BADC));
  // A block is two 128-bit lanes: 128-bit lane 0 + 1 holds [b0, b2], lane 2 + 3 [b1, b3].
  t = _mm512_add_epi32(t, _mm512_shuffle_i32x4(t, t, _MM_SHUFFLE(2, 3, 0, 1)));
  const __m512i order = _mm512_setr_epi32(0, 8, 1, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  return _mm512_castsi512_si128(_mm512_permutexvar_epi32(order, t));
}

// Several inputs: d[i] and d[4 + i] are input i's blocks 0-1 and 2-3; returns the 16 block
// sums with block k of input i in lane 4k + i.
__m512i int8BlockSums4(const __m512i d[8]) {
  __m512i t[4];  // 128-bit lane L of t[j]: lane L's int32s of d[2j] and d[2j+1] summed in pairs
  for (int j = 0; j < 4; ++j)
    t[j] = _mm512_add_epi32(_mm512_unpacklo_epi32(d[2 * j], d[2 * j + 1]),
                            _mm512_unpackhi_epi32(d[2 * j], d[2 * j + 1]));
  // 128-bit lane L of u0: the sums of lane L of d[0..3]; u1: of d[4..7].
  const __m512i u0 =
      _mm512_add_epi32(_mm512_unpacklo_epi64(t[0], t[1]), _mm512_unpackhi_epi64(t[0], t[1]));
  const __m512i u1 =
      _mm512_add_epi32(_mm512_unpacklo_epi64(t[2], t[3]), _mm512_unpackhi_epi64(t[2], t[3]));
  // A block is two 128-bit lanes (8 int32s): add lanes 0+1 and 2+3.
  return _mm512_add_epi32(_mm512_shuffle_i32x4(u0, u1, _MM_SHUFFLE(2, 0, 2, 0)),
                          _mm512_shuffle_i32x4(u0, u1, _MM_SHUFFLE(3, 1, 3, 1)));
}

template <Groups g>
void int8One(const IntRowArgs& a, float* out) {
  const __m512i zero = _mm512_setzero_si512();
  __m128 lanes = _mm_setzero_ps();
  for (int64_t chunk = 0; chunk < a.paddedCols / 128; ++chunk) {
    // As in the AVX2 kernels: without it the hardware prefetcher alone left int8 matvecs at
    // 61-65 % of the memory read bandwidth on an AVX-512 Xeon (`bench kernels`).
    prefetchAhead(a.weights + chunk * 128, 2);
    __m512i d[2];
    for (int half = 0; half < 2; ++half) {
      const int64_t offset = chunk * 128 + half * 64;
      const __m512i w = _mm512_loadu_si512(a.weights + offset);
      const __m512i x = _mm512_loadu_si512(a.codes + offset);
      const __m512i signedW = _mm512_mask_sub_epi8(w, _mm512_movepi8_mask(x), zero, w);
      d[half] = _mm512_dpbusd_epi32(zero, _mm512_abs_epi8(x), signedW);
    }
    const __m128 scale =
        _mm_mul_ps(blockScales<g>(a, chunk), _mm_loadu_ps(a.actScales + chunk * 4));
    lanes = _mm_add_ps(lanes, _mm_mul_ps(scale, _mm_cvtepi32_ps(int8BlockSums(d[0], d[1]))));
  }
  *out = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
}

// Four inputs in one vector of f32 sums: lane 4k + i is input i's lane[k].
template <Groups g>
void int8Four(const IntRowArgs& a, float* out, int64_t outStride) {
  const __m512i zero = _mm512_setzero_si512();
  const int8_t* codes[4];
  const float* actScales[4];
  for (int i = 0; i < 4; ++i) {
    codes[i] = a.codes + i * a.paddedCols;
    actScales[i] = a.actScales + i * (a.paddedCols / 32);
  }
  __m512 lanes = _mm512_setzero_ps();
  for (int64_t chunk = 0; chunk < a.paddedCols / 128; ++chunk) {
    prefetchAhead(a.weights + chunk * 128, 2);
    __m512i d[8];
    for (int half = 0; half < 2; ++half) {
      const int64_t offset = chunk * 128 + half * 64;
      const __m512i w = _mm512_loadu_si512(a.weights + offset);
      for (int i = 0; i < 4; ++i) {
        const __m512i x = _mm512_loadu_si512(codes[i] + offset);
        const __m512i signedW = _mm512_mask_sub_epi8(w, _mm512_movepi8_mask(x), zero, w);
        d[half * 4 + i] = _mm512_dpbusd_epi32(zero, _mm512_abs_epi8(x), signedW);
      }
    }
    // Lane 4k + i: block k's weight scale times input i's scale of block k.
    __m512 act = _mm512_castps128_ps512(_mm_loadu_ps(actScales[0] + chunk * 4));
    act = _mm512_insertf32x4(act, _mm_loadu_ps(actScales[1] + chunk * 4), 1);
    act = _mm512_insertf32x4(act, _mm_loadu_ps(actScales[2] + chunk * 4), 2);
    act = _mm512_insertf32x4(act, _mm_loadu_ps(actScales[3] + chunk * 4), 3);
    act = _mm512_permutexvar_ps(
        _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), act);
    const __m512 scale = _mm512_mul_ps(spreadFour(blockScales<g>(a, chunk)), act);
    lanes = _mm512_add_ps(lanes, _mm512_mul_ps(scale, _mm512_cvtepi32_ps(int8BlockSums4(d))));
  }
  // y = (lane0 + lane1) + (lane2 + lane3) for each input (128-bit lane k holds lane[k]).
  const __m128 l01 = _mm_add_ps(_mm512_castps512_ps128(lanes), _mm512_extractf32x4_ps(lanes, 1));
  const __m128 l23 = _mm_add_ps(_mm512_extractf32x4_ps(lanes, 2), _mm512_extractf32x4_ps(lanes, 3));
  const __m128 y = _mm_add_ps(l01, l23);
  for (int i = 0; i < 4; ++i) out[i * outStride] = y[i];
}

// Four inputs share one pass; fewer run one at a time (the four-input reduction costs the same
// for fewer, measured slower than single passes below four).
template <Groups g>
void int8Inputs(const IntRowArgs& a, float* out, int64_t outStride) {
  if (a.inputs == 4) return int8Four<g>(a, out, outStride);
  for (int i = 0; i < a.inputs; ++i) int8One<g>(input(a, i), out + i * outStride);
}

template <int G>
void int4ByCount(const IntRowArgs& a, float* out, int64_t outStride) {
  switch (a.inputs) {
    case 1:
      return int4Inputs<1, G>(a, out, outStride);
    case 2:
      return int4Inputs<2, G>(a, out, outStride);
    case 3:
      return int4Inputs<3, G>(a, out, outStride);
    default:
      return int4Inputs<4, G>(a, out, outStride);
  }
}

}  // namespace

void dotInt8Avx512Vnni(const IntRowArgs& a, float* out, int64_t outStride) {
  switch (groupsOf(a.groupShift)) {
    case Groups::PerBlock:
      return int8Inputs<Groups::PerBlock>(a, out, outStride);
    case Groups::PerPair:
      return int8Inputs<Groups::PerPair>(a, out, outStride);
    case Groups::Wider:
      return int8Inputs<Groups::Wider>(a, out, outStride);
  }
}

void dotInt4Avx512Vnni(const IntRowArgs& a, float* out, int64_t outStride) {
  switch (a.groupShift) {
    case 0:
      return int4ByCount<0>(a, out, outStride);
    case 1:
      return int4ByCount<1>(a, out, outStride);
    case 2:
      return int4ByCount<2>(a, out, outStride);
    case 3:
      return int4ByCount<3>(a, out, outStride);
    default:
      return int4ByCount<4>(a, out, outStride);
  }
}

}  // namespace strata::kernels
