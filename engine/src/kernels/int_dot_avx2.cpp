// AVX2 integer dot products (compiled with -mavx2). maddubs multiplies unsigned by signed
// bytes: int4 codes are stored unsigned (q + 8) and corrected with 8 * sum(acodes); int8
// uses the sign trick |a| * (w * sign(a)), safe because no code is -128.
#include <immintrin.h>

#include "kernels/int_dot_simd.h"

namespace strata::kernels {
namespace {

// Sums of the four 8-lane int32 groups... as [b0, b1, b2, b3] where v_k holds block k.
__m128i reduceFour(__m256i v0, __m256i v1, __m256i v2, __m256i v3) {
  const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(v0, v1), _mm256_hadd_epi32(v2, v3));
  return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

float int8Row(const IntRowArgs& a) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m128 lanes = _mm_setzero_ps();
  for (int64_t chunk = 0; chunk < a.paddedCols / 128; ++chunk) {
    // As the int4 rows do: with the hardware prefetcher alone int8 matvecs read 79-89 % of the
    // memory bandwidth (`bench kernels`, Zen 3), with this 88-111 %.
    prefetchAhead(a.weights + chunk * 128, 2);
    __m256i sums[4];
    for (int k = 0; k < 4; ++k) {
      const int64_t offset = chunk * 128 + k * 32;
      const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.weights + offset));
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.codes + offset));
      const __m256i products = _mm256_maddubs_epi16(_mm256_sign_epi8(x, x), _mm256_sign_epi8(w, x));
      sums[k] = _mm256_madd_epi16(products, ones);
    }
    lanes = accumulate4<false>(lanes, reduceFour(sums[0], sums[1], sums[2], sums[3]), a, chunk * 4);
  }
  return finish(lanes);
}

// One int8 row against kInputs (2-4) inputs, for verify passes and prefill. maddubs takes |w|
// (unsigned) and x with w's sign: |w| * (x * sign(w)) = w * x, the same exact integer sums as
// int8Row's, each 32 weight bytes loaded and made unsigned once for all the inputs (one sign
// per input instead of two). A throwaway harness (256 x 1024 rows, 60 inputs, one thread,
// best of 200): 21.0-21.5 GMAC/s against 18.6-19.1 for int8Row per input.
template <int kInputs>
void int8Inputs(const IntRowArgs& a, float* out, int64_t outStride) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m128 lanes[kInputs];
  for (int i = 0; i < kInputs; ++i) lanes[i] = _mm_setzero_ps();
  for (int64_t chunk = 0; chunk < a.paddedCols / 128; ++chunk) {
    prefetchAhead(a.weights + chunk * 128, 2);
    __m256i sums[kInputs][4];
    for (int k = 0; k < 4; ++k) {
      const int64_t offset = chunk * 128 + k * 32;
      const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.weights + offset));
      const __m256i absW = _mm256_abs_epi8(w);
      for (int i = 0; i < kInputs; ++i) {
        const __m256i x = _mm256_loadu_si256(
            reinterpret_cast<const __m256i*>(a.codes + i * a.paddedCols + offset));
        sums[i][k] = _mm256_madd_epi16(_mm256_maddubs_epi16(absW, _mm256_sign_epi8(x, w)), ones);
      }
    }
    for (int i = 0; i < kInputs; ++i)
      lanes[i] =
          accumulate4<false>(lanes[i], reduceFour(sums[i][0], sums[i][1], sums[i][2], sums[i][3]),
                             input(a, i), chunk * 4);
  }
  for (int i = 0; i < kInputs; ++i) out[i * outStride] = finish(lanes[i]);
}

// Int4, one chunk (128 columns, 64 weight bytes) unpacked to its codes (unsigned, q + 8): for
// each 32-byte half, the low and the high nibbles.
struct Int4Chunk {
  __m256i lo[2], hi[2];
};

inline Int4Chunk unpackChunk(const uint8_t* w) {
  const __m256i lowMask = _mm256_set1_epi8(0x0F);
  Int4Chunk c;
  for (int half = 0; half < 2; ++half) {  // weight bytes 32*half..
    const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + half * 32));
    c.lo[half] = _mm256_and_si256(bytes, lowMask);
    c.hi[half] = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), lowMask);
  }
  return c;
}

// The chunk against one input's codes: the int32 partial sums of its blocks as
// [b0 b0 b2 b2 | b1 b1 b3 b3] (the offsets are subtracted later).
inline __m256i chunkPairs(const Int4Chunk& c, const int8_t* x) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i p[2];  // int32 lanes 0-3: block 2 * half, 4-7: block 2 * half + 1
  for (int half = 0; half < 2; ++half) {
    const __m256i xlo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + half * 32));
    const __m256i xhi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 64 + half * 32));
    const __m256i pairs = _mm256_add_epi16(_mm256_maddubs_epi16(c.lo[half], xlo),
                                           _mm256_maddubs_epi16(c.hi[half], xhi));
    p[half] = _mm256_madd_epi16(pairs, ones);
  }
  return _mm256_hadd_epi32(p[0], p[1]);
}

// Int4 weight scales of the eight blocks from `first` (a multiple of 8, all within the row).
inline __m256 int4Scales8(const IntRowArgs& a, int64_t first) {
  const uint16_t* s = int4Scales(a);
  __m128i bits;
  switch (a.groupShift) {
    case 0:
      bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + first));
      break;
    case 1:
      bits = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(s + (first >> 1)));
      break;
    case 2:
      bits = _mm_cvtsi32_si128(s[first >> 2] | (s[(first >> 2) + 1] << 16));
      break;
    default:
      return _mm256_set1_ps(int4Scale(a, first >> a.groupShift));
  }
  const __m256 v = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16));
  if (a.groupShift == 0) return v;
  const __m256i spread = a.groupShift == 1 ? _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3)
                                           : _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
  return _mm256_permutevar8x32_ps(v, spread);
}

// Chunks `chunk` and `chunk + 1` (eight blocks) of one int4 row against kInputs inputs, each
// chunk unpacked once for all of them, added into lanes[i] (the eight lanes those blocks go
// to). Their block sums are reduced together: one hadd and a permute per eight blocks.
template <int kInputs>
__attribute__((always_inline)) inline void addChunkPair(const IntRowArgs& a, int64_t chunk,
                                                        __m256 (&lanes)[kInputs]) {
  const int64_t blocks = a.paddedCols / 32;
  const uint8_t* w = a.weights + chunk * 64;
  prefetchAhead(w, 2);
  __m256i h[kInputs][2];
  for (int c = 0; c < 2; ++c) {
    const Int4Chunk unpacked = unpackChunk(w + c * 64);
    for (int i = 0; i < kInputs; ++i)
      h[i][c] = chunkPairs(unpacked, a.codes + i * a.paddedCols + (chunk + c) * 128);
  }
  const int64_t first = chunk * 4;
  const __m256 weightScales = int4Scales8(a, first);
  const __m256i blockOrder = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (int i = 0; i < kInputs; ++i) {
    // [c0 b0, c0 b2, c1 b0, c1 b2 | c0 b1, c0 b3, c1 b1, c1 b3], then in block order.
    const __m256i sums =
        _mm256_permutevar8x32_epi32(_mm256_hadd_epi32(h[i][0], h[i][1]), blockOrder);
    const __m256i isums = _mm256_sub_epi32(
        sums,
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.int4Offsets + i * blocks + first)));
    const __m256 scale =
        _mm256_mul_ps(weightScales, _mm256_loadu_ps(a.actScales + i * blocks + first));
    lanes[i] = _mm256_add_ps(lanes[i], _mm256_mul_ps(scale, _mm256_cvtepi32_ps(isums)));
  }
}

// One int4 row against kInputs (1 or 2) inputs: two inputs' sums and lanes and an unpacked
// chunk fill the 16 registers. Quads of chunks: blocks 0-7 of each 16 into lanes 0-7 (low),
// 8-15 into lanes 8-15 (high).
template <int kInputs>
void int4Inputs(const IntRowArgs& a, float* out, int64_t outStride) {
  const int64_t chunks = a.paddedCols / 128;
  __m256 low[kInputs], high[kInputs];
  for (int i = 0; i < kInputs; ++i) low[i] = high[i] = _mm256_setzero_ps();
  int64_t chunk = 0;
  for (; chunk + 4 <= chunks; chunk += 4) {
    addChunkPair<kInputs>(a, chunk, low);
    addChunkPair<kInputs>(a, chunk + 2, high);
  }
  if (chunk + 2 <= chunks) {
    addChunkPair<kInputs>(a, chunk, low);
    chunk += 2;
  }
  for (int i = 0; i < kInputs; ++i) {
    // A last odd chunk c into lanes 4 (c % 4) .., as a chunk of its own.
    __m128 lanes[4] = {_mm256_castps256_ps128(low[i]), _mm256_extractf128_ps(low[i], 1),
                       _mm256_castps256_ps128(high[i]), _mm256_extractf128_ps(high[i], 1)};
    if (chunk < chunks) {
      const IntRowArgs one = input(a, i);
      const __m256i h = _mm256_hadd_epi32(
          chunkPairs(unpackChunk(a.weights + chunk * 64), one.codes + chunk * 128),
          _mm256_setzero_si256());
      const __m256i sums =
          _mm256_permutevar8x32_epi32(h, _mm256_setr_epi32(0, 4, 1, 5, 0, 0, 0, 0));
      const __m128i isums = _mm_sub_epi32(
          _mm256_castsi256_si128(sums),
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(one.int4Offsets + chunk * 4)));
      lanes[chunk % 4] = accumulate4<true>(lanes[chunk % 4], isums, one, chunk * 4);
    }
    // lanes[c] holds lane[4c .. 4c+3]: l8 = lanes 0+2 | 1+3, then l4, l2, y.
    const __m128 l4 = _mm_add_ps(_mm_add_ps(lanes[0], lanes[2]), _mm_add_ps(lanes[1], lanes[3]));
    alignas(16) float l[4];
    _mm_store_ps(l, l4);
    out[i * outStride] = (l[0] + l[2]) + (l[1] + l[3]);
  }
}

}  // namespace

// The path for x86-64 CPUs without VNNI. Int8: a decode step's one input alone, several in
// one pass.
void dotInt8Avx2(const IntRowArgs& a, float* out, int64_t outStride) {
  switch (a.inputs) {
    case 4:
      return int8Inputs<4>(a, out, outStride);
    case 3:
      return int8Inputs<3>(a, out, outStride);
    case 2:
      return int8Inputs<2>(a, out, outStride);
    default:
      for (int i = 0; i < a.inputs; ++i) out[i * outStride] = int8Row(input(a, i));
  }
}

// Int4 two inputs at a time, each chunk unpacked once per pass.
void dotInt4Avx2(const IntRowArgs& a, float* out, int64_t outStride) {
  int i = 0;
  for (; i + 2 <= a.inputs; i += 2) {
    IntRowArgs pair = input(a, i);
    pair.inputs = 2;
    int4Inputs<2>(pair, out + i * outStride, outStride);
  }
  if (i < a.inputs) int4Inputs<1>(input(a, i), out + i * outStride, outStride);
}

}  // namespace strata::kernels
