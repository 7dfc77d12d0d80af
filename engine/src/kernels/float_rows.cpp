// The f32 row kernels of matmul.h (rowsTimesInputs, its gathered, bf16 and int8 forms,
// addScaledRows and its int8 form),
// each built for three vector widths and picked per call by the CPU: 16 floats (AVX-512), 8 (AVX2)
// and 4 (baseline SSE2, NEON), so the binary runs on any x86-64 without -march=native.
//
// A dot product is 32 partial sums (two 16-column halves of each 32-column chunk, so two add
// chains hide each other's latency), then a pairwise sum; a tail under 16 goes into the first
// half. The order depends only on `cols`, never on how many inputs or rows are computed
// together nor on the vector width (no FMA contraction in this project), so a row's result is
// bit-identical in a batch and alone (speculative verification relies on that) and on every CPU.
//
// The bodies are always-inlined templates over the weights' row type (f32, or bf16 or int8
// codes times their group's scale widened in registers: each value exactly what the widened
// f32 row holds, so the results are its results) and the width, expanded
// inside each per-width entry point (a function they called would not be compiled for its
// target). The width is always the target's register width: GCC 12 keeps a vector wider than
// the registers in memory, moved through general registers (with AVX-512's 16-float vectors on
// AVX2 these kernels took 30 % of a decode step on a Zen 3, ~10x their cost here).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include "kernels/matmul.h"
#include "strata/error.h"

namespace strata::kernels {
namespace {

// GCC vector extensions of W floats, and the lanes bf16 and int8 widening go through.
template <int W>
struct Vec {
  typedef float Floats __attribute__((vector_size(W * 4)));
  typedef uint16_t Halves __attribute__((vector_size(W * 2)));
  typedef uint16_t Pairs __attribute__((vector_size(W * 4)));  // two halves per float lane
  typedef uint32_t Words __attribute__((vector_size(W * 4)));
  typedef int8_t Bytes __attribute__((vector_size(W)));  // int8 widening's steps
  typedef int16_t Shorts __attribute__((vector_size(W * 2)));
  typedef int32_t Ints __attribute__((vector_size(W * 4)));
};

// A row of int8 codes with one f32 scale per 2^groupShift columns, from `column` on: `+`
// moves along it as a pointer would, `[j]` is the value dequantizeRow writes for column j.
struct Int8Row {
  const int8_t* codes;  // the row's first code
  const float* scales;  // the row's first group's scale
  int groupShift;
  int64_t column = 0;

  Int8Row operator+(int64_t k) const { return {codes, scales, groupShift, column + k}; }
  float operator[](int64_t j) const {
    return static_cast<float>(codes[column + j]) * scales[(column + j) >> groupShift];
  }
};
// `count` consecutive rows of an int8 matrix as Int8Rows.
struct Int8Rows {
  const int8_t* codes;  // the first row's codes
  const float* scales;  // the first row's scales
  int64_t rowBytes, groupsPerRow;
  int groupShift;

  Int8Row operator[](int64_t r) const {
    return {codes + r * rowBytes, scales + r * groupsPerRow, groupShift};
  }
};

// Loads as macros: a function taking or returning a wide vector changes the ABI per target.
#define STRATA_LOAD(W, p)             \
  ({                                  \
    typename Vec<W>::Floats v_;       \
    std::memcpy(&v_, (p), sizeof v_); \
    v_;                               \
  })
#define STRATA_LOAD_TAIL(W, p, count)                          \
  ({                                                           \
    typename Vec<W>::Floats v_ = {};                           \
    for (int64_t l_ = 0; l_ < (count); ++l_) v_[l_] = (p)[l_]; \
    v_;                                                        \
  })
// bf16 is the top half of a binary32: widening puts a zero half below each value. With eight
// lanes that is one interleave with zeros (vpermq, vpunpcklwd), written as a shuffle because
// GCC 12 splits the widening conversion into two halves (five shuffles and a shift per vector;
// bf16 rows in cache run 1.08-1.33x faster this way); other widths convert and shift.
#define STRATA_LOAD_BF16(W, p)                                                                   \
  ({                                                                                             \
    typename Vec<W>::Halves h_;                                                                  \
    std::memcpy(&h_, (p), sizeof h_);                                                            \
    typename Vec<W>::Floats v_;                                                                  \
    if constexpr (W == 8) {                                                                      \
      const typename Vec<W>::Halves z_ = {};                                                     \
      const typename Vec<W>::Pairs w_ =                                                          \
          __builtin_shufflevector(z_, h_, 0, 8, 0, 9, 0, 10, 0, 11, 0, 12, 0, 13, 0, 14, 0, 15); \
      std::memcpy(&v_, &w_, sizeof v_);                                                          \
    } else {                                                                                     \
      const auto w_ = __builtin_convertvector(h_, typename Vec<W>::Words) << 16;                 \
      std::memcpy(&v_, &w_, sizeof v_);                                                          \
    }                                                                                            \
    v_;                                                                                          \
  })
#define STRATA_LOAD_TAIL_BF16(W, p, count)                                     \
  ({                                                                           \
    typename Vec<W>::Words w_ = {};                                            \
    for (int64_t l_ = 0; l_ < (count); ++l_) w_[l_] = uint32_t{(p)[l_]} << 16; \
    typename Vec<W>::Floats v_;                                                \
    std::memcpy(&v_, &w_, sizeof v_);                                          \
    v_;                                                                        \
  })
// Int8 codes as floats. GCC 12 lowers a vector conversion from bytes lane by lane through
// general registers, and bytes -> 16-bit -> 32-bit lanes in halves (nine instructions per 16
// codes with AVX-512). With 16 and 8 lanes (x86, little-endian) the codes are loaded as 32-bit
// words instead, each word copied to four lanes (vpermd), its byte k moved to the top of lane k
// (vpsllvd) and shifted down with its sign (vpsrad). GCC 12 permutes in registers only from a
// vector half the result's width, so the words come in as 2W codes (two vectors' worth, see
// STRATA_LOAD_WEIGHTS_PAIR) or as W codes copied twice. `bench kernels` kv_b_query_int8 /
// kv_b_output_int8 (one head's int8 kv_b, from cache) 11.5-11.9 -> 20-23 GFLOP/s on an AVX-512
// Xeon. Four lanes (baseline SSE2, NEON) keep the conversions.
//
// The codes in words w_ (2W bytes) from word o on, sign-extended to W int32 lanes.
#define STRATA_CODES_OF_WORDS(W, w, o)                                                       \
  ({                                                                                         \
    typename Vec<W>::Ints spread_, byteShifts_;                                              \
    if constexpr (W == 16)                                                                   \
      spread_ = __builtin_shufflevector(w, w, o, o, o, o, o + 1, o + 1, o + 1, o + 1, o + 2, \
                                        o + 2, o + 2, o + 2, o + 3, o + 3, o + 3, o + 3);    \
    else                                                                                     \
      spread_ = __builtin_shufflevector(w, w, o, o, o, o, o + 1, o + 1, o + 1, o + 1);       \
    for (int k_ = 0; k_ < W; ++k_) byteShifts_[k_] = 24 - 8 * (k_ % 4);                      \
    (spread_ << byteShifts_) >> 24;                                                          \
  })
// W int8 codes from p as floats.
#define STRATA_WIDEN_INT8(W, p)                                                          \
  ({                                                                                     \
    typename Vec<W>::Ints i_;                                                            \
    if constexpr (W == 16) {                                                             \
      typedef int32_t Words_ __attribute__((vector_size(16)));                           \
      typedef int32_t Copies_ __attribute__((vector_size(32)));                          \
      Words_ w_;                                                                         \
      std::memcpy(&w_, (p), sizeof w_);                                                  \
      const Copies_ c_ = __builtin_shufflevector(w_, w_, 0, 1, 2, 3, 0, 1, 2, 3);        \
      i_ = STRATA_CODES_OF_WORDS(16, c_, 0);                                             \
    } else if constexpr (W == 8) {                                                       \
      typedef int32_t Words_ __attribute__((vector_size(8)));                            \
      typedef int32_t Copies_ __attribute__((vector_size(16)));                          \
      Words_ w_;                                                                         \
      std::memcpy(&w_, (p), sizeof w_);                                                  \
      const Copies_ c_ = __builtin_shufflevector(w_, w_, 0, 1, 0, 1);                    \
      i_ = STRATA_CODES_OF_WORDS(8, c_, 0);                                              \
    } else {                                                                             \
      typename Vec<W>::Bytes b_;                                                         \
      std::memcpy(&b_, (p), sizeof b_);                                                  \
      i_ = __builtin_convertvector(__builtin_convertvector(b_, typename Vec<W>::Shorts), \
                                   typename Vec<W>::Ints);                               \
    }                                                                                    \
    __builtin_convertvector(i_, typename Vec<W>::Floats);                                \
  })
// W codes of an Int8Row times their scale: one group, as W <= 32 <= the group size and
// vectors start at multiples of W. The tail's lanes past `count` are 0, as a widened row's.
#define STRATA_LOAD_INT8(W, r) \
  (STRATA_WIDEN_INT8(W, (r).codes + (r).column) * (r).scales[(r).column >> (r).groupShift])
#define STRATA_LOAD_TAIL_INT8(W, r, count)                     \
  ({                                                           \
    typename Vec<W>::Floats v_ = {};                           \
    for (int64_t l_ = 0; l_ < (count); ++l_) v_[l_] = (r)[l_]; \
    v_;                                                        \
  })
// W weights of row type R (const float*, const uint16_t* for bf16, or Int8Row) from p as f32
// lanes (the first `count` of them for the tail).
#define STRATA_LOAD_WEIGHTS(W, R, p)                       \
  ({                                                       \
    typename Vec<W>::Floats l_;                            \
    if constexpr (std::is_same_v<R, Int8Row>)              \
      l_ = STRATA_LOAD_INT8(W, p);                         \
    else if constexpr (std::is_same_v<R, const uint16_t*>) \
      l_ = STRATA_LOAD_BF16(W, p);                         \
    else                                                   \
      l_ = STRATA_LOAD(W, p);                              \
    l_;                                                    \
  })
// The 2W weights from p as two vectors (lo: p[0..W-1], hi: p[W..2W-1]); 2W int8 codes with 16
// or 8 lanes from one load of words. Both halves lie in one scale group, as 2W <= 32 <= the
// group size and p is a multiple of 2W.
#define STRATA_LOAD_WEIGHTS_PAIR(W, R, p, lo, hi)                                          \
  do {                                                                                     \
    if constexpr (std::is_same_v<R, Int8Row> && (W == 16 || W == 8)) {                     \
      /* GCC 12 takes a vector size depending on W for no vector: one typedef per width */ \
      typedef int32_t Words16_ __attribute__((vector_size(32)));                           \
      typedef int32_t Words8_ __attribute__((vector_size(16)));                            \
      std::conditional_t<W == 16, Words16_, Words8_> w_;                                   \
      std::memcpy(&w_, (p).codes + (p).column, sizeof w_);                                 \
      const float scale_ = (p).scales[(p).column >> (p).groupShift];                       \
      using F_ = typename Vec<W>::Floats;                                                  \
      lo = __builtin_convertvector(STRATA_CODES_OF_WORDS(W, w_, 0), F_) * scale_;          \
      hi = __builtin_convertvector(STRATA_CODES_OF_WORDS(W, w_, W / 4), F_) * scale_;      \
    } else {                                                                               \
      lo = STRATA_LOAD_WEIGHTS(W, R, p);                                                   \
      hi = STRATA_LOAD_WEIGHTS(W, R, (p) + W);                                             \
    }                                                                                      \
  } while (0)
#define STRATA_LOAD_WEIGHTS_TAIL(W, R, p, count)           \
  ({                                                       \
    typename Vec<W>::Floats l_;                            \
    if constexpr (std::is_same_v<R, Int8Row>)              \
      l_ = STRATA_LOAD_TAIL_INT8(W, p, count);             \
    else if constexpr (std::is_same_v<R, const uint16_t*>) \
      l_ = STRATA_LOAD_TAIL_BF16(W, p, count);             \
    else                                                   \
      l_ = STRATA_LOAD_TAIL(W, p, count);                  \
    l_;                                                    \
  })

// Keeps two vectors in registers: GCC would rather fold a load of a weight vector into every
// input's multiply (two inputs then took twice one input's time, now ~1.5x: loads, not
// arithmetic, bound these kernels). An empty asm that "changes" them; "x" is a vector
// register on x86-64 and Arm64.
#if defined(__x86_64__) || defined(__aarch64__)
#define STRATA_IN_REGISTERS(a, b) asm("" : "+x"(a), "+x"(b))
#else
#define STRATA_IN_REGISTERS(a, b) (void)0
#endif

typedef Vec<16>::Floats Lanes16;
typedef Vec<8>::Floats Lanes8;
typedef Vec<4>::Floats Lanes4;
// A dot's 16 partial sums (a[p] + b[p] lane by lane, as 16 / W vectors) folded to four lanes
// in the documented order: lane l + 8, then lane l + 4.
template <int W>
__attribute__((always_inline)) inline Lanes4 foldToFour(const typename Vec<W>::Floats* a,
                                                        const typename Vec<W>::Floats* b) {
  if constexpr (W == 16) {
    const Lanes16 s = a[0] + b[0];
    const Lanes8 h8 = __builtin_shufflevector(s, s, 0, 1, 2, 3, 4, 5, 6, 7) +
                      __builtin_shufflevector(s, s, 8, 9, 10, 11, 12, 13, 14, 15);
    return __builtin_shufflevector(h8, h8, 0, 1, 2, 3) +
           __builtin_shufflevector(h8, h8, 4, 5, 6, 7);
  } else if constexpr (W == 8) {
    const Lanes8 h8 = (a[0] + b[0]) + (a[1] + b[1]);
    return __builtin_shufflevector(h8, h8, 0, 1, 2, 3) +
           __builtin_shufflevector(h8, h8, 4, 5, 6, 7);
  } else {
    return ((a[0] + b[0]) + (a[2] + b[2])) + ((a[1] + b[1]) + (a[3] + b[3]));
  }
}

// The last step of dots, four at a time: each dot's four lanes l summed (l0 + l2) + (l1 + l3),
// for four dots in six shuffles and three adds instead of one dot's scalar adds (short rows,
// as a small model's, spent as long summing as multiplying). Outputs are written on flush.
struct FourLaneTotals {
  Lanes4 parts[4];
  float* outs[4];
  int count = 0;

  __attribute__((always_inline)) inline void add(Lanes4 part, float* out) {
    parts[count] = part;
    outs[count] = out;
    if (++count == 4) flush();
  }
  __attribute__((always_inline)) inline void flush() {
    if (count == 0) return;
    for (int k = count; k < 4; ++k) parts[k] = Lanes4{};
    // [a0 + a2, b0 + b2, a1 + a3, b1 + b3] and the same for c, d; then lanes 0 + 2, 1 + 3.
    const Lanes4 ab = __builtin_shufflevector(parts[0], parts[1], 0, 4, 1, 5) +
                      __builtin_shufflevector(parts[0], parts[1], 2, 6, 3, 7);
    const Lanes4 cd = __builtin_shufflevector(parts[2], parts[3], 0, 4, 1, 5) +
                      __builtin_shufflevector(parts[2], parts[3], 2, 6, 3, 7);
    const Lanes4 sums =
        __builtin_shufflevector(ab, cd, 0, 1, 4, 5) + __builtin_shufflevector(ab, cd, 2, 3, 6, 7);
    for (int k = 0; k < count; ++k) *outs[k] = sums[k];
    count = 0;
  }
};

// Adds the 16-column halves at begin, begin + 32, ... (before end) of a row times each input's
// into `acc`: the single-half and half-pass parts of the dots below.
template <typename R, int kInputs, int W>
__attribute__((always_inline)) inline void addHalves(
    R wr, const float* x, int64_t cols, int64_t begin, int64_t end,
    typename Vec<W>::Floats (&acc)[kInputs][16 / W]) {
  using F = typename Vec<W>::Floats;
  for (int64_t k = begin; k < end; k += 32) {
#pragma GCC unroll 4
    for (int p = 0; p < 16 / W; ++p) {
      const F w0 = STRATA_LOAD_WEIGHTS(W, R, wr + k + p * W);
#pragma GCC unroll 4
      for (int j = 0; j < kInputs; ++j) acc[j][p] += w0 * STRATA_LOAD(W, x + j * cols + k + p * W);
    }
  }
}

// Adds the last cols - tailStart (< 16) columns into `acc`; lanes past the tail add 0 * 0, as
// the 16-lane path does.
template <typename R, int kInputs, int W>
__attribute__((always_inline)) inline void addTail(
    R wr, const float* x, int64_t cols, int64_t tailStart,
    typename Vec<W>::Floats (&acc)[kInputs][16 / W]) {
  using F = typename Vec<W>::Floats;
  const int64_t tail = cols - tailStart;
  if (tail <= 0) return;
#pragma GCC unroll 4
  for (int p = 0; p < 16 / W; ++p) {
    const int64_t count = std::clamp<int64_t>(tail - p * W, 0, W);
    const F w0 = STRATA_LOAD_WEIGHTS_TAIL(W, R, wr + tailStart + p * W, count);
#pragma GCC unroll 4
    for (int j = 0; j < kInputs; ++j)
      acc[j][p] += w0 * STRATA_LOAD_TAIL(W, x + j * cols + tailStart + p * W, count);
  }
}

// bf16 rows with 16 or 8 lanes go "paired": 2W weights loaded as W 32-bit words give the even
// columns (each word's low half shifted up) and the odd ones (its high half masked), where
// widening them in column order costs a shuffle per W (vpmovzxwd, or AVX2's interleave) on
// the one port that does shuffles: 1.35x the rate on cache-resident rows of 256 columns. The
// inputs are paired to match (pairInputs) and the sums put back in column order after the
// 32-column chunks (unpairSums), so every partial sum meets the same products in the same
// order as in column order: the same bits.
template <typename R, int W>
constexpr bool kPairable = std::is_same_v<R, const uint16_t*> && (W == 16 || W == 8);

// The inputs of the full 32-column chunks as paired rows meet them: within each 2W columns,
// the even columns, then the odd ones. Columns after the last full chunk are not written.
template <int W>
__attribute__((always_inline)) inline void pairInputs(const float* x, int64_t n, int64_t cols,
                                                      float* paired) {
  using F = typename Vec<W>::Floats;
  const int64_t pairs = cols / 32 * 32;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < pairs; k += 2 * W) {
      const F lo = STRATA_LOAD(W, x + i * cols + k), hi = STRATA_LOAD(W, x + i * cols + k + W);
      F even, odd;
      if constexpr (W == 16) {
        even = __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
                                       28, 30);
        odd = __builtin_shufflevector(lo, hi, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29,
                                      31);
      } else {
        even = __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14);
        odd = __builtin_shufflevector(lo, hi, 1, 3, 5, 7, 9, 11, 13, 15);
      }
      std::memcpy(paired + i * cols + k, &even, sizeof even);
      std::memcpy(paired + i * cols + k + W, &odd, sizeof odd);
    }
}

// Part p of the 32 columns from k: two weight vectors, w0 meeting the inputs at
// chunkInputs<>(p).first, w1 at .second (offsets from k). In column order, w0 is part p of the
// first 16 columns and w1 of the second 16; paired, w0 / w1 are the even / odd columns of the
// p-th 2W.
template <typename R, int W, bool kPaired>
__attribute__((always_inline)) inline void loadChunkPart(R wr, int64_t k, int p,
                                                         typename Vec<W>::Floats& w0,
                                                         typename Vec<W>::Floats& w1) {
  if constexpr (kPaired) {
    using U = typename Vec<W>::Words;
    U words;
    std::memcpy(&words, wr + k + p * 2 * W, sizeof words);
    const U even = words << 16, odd = words & (U{} + 0xFFFF0000u);
    std::memcpy(&w0, &even, sizeof w0);
    std::memcpy(&w1, &odd, sizeof w1);
  } else if constexpr (W == 16) {  // the two halves of the chunk are adjacent
    STRATA_LOAD_WEIGHTS_PAIR(W, R, wr + k, w0, w1);
  } else {
    w0 = STRATA_LOAD_WEIGHTS(W, R, wr + k + p * W);
    w1 = STRATA_LOAD_WEIGHTS(W, R, wr + k + 16 + p * W);
  }
}
template <int W, bool kPaired>
constexpr std::pair<int64_t, int64_t> chunkInputs(int p) {
  return kPaired ? std::pair<int64_t, int64_t>{p * 2 * W, p * 2 * W + W}
                 : std::pair<int64_t, int64_t>{p * W, 16 + p * W};
}

// Paired sums (a[p] / b[p]: the even / odd columns of the p-th 2W) put in column order (a: the
// first 16 columns of each chunk, b: the second 16).
template <int W>
__attribute__((always_inline)) inline void unpairSums(typename Vec<W>::Floats (&a)[16 / W],
                                                      typename Vec<W>::Floats (&b)[16 / W]) {
  using F = typename Vec<W>::Floats;
  if constexpr (W == 16) {
    const F e = a[0], o = b[0];
    a[0] = __builtin_shufflevector(e, o, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    b[0] =
        __builtin_shufflevector(e, o, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  } else {
    const F e0 = a[0], o0 = b[0], e1 = a[1], o1 = b[1];
    a[0] = __builtin_shufflevector(e0, o0, 0, 8, 1, 9, 2, 10, 3, 11);
    a[1] = __builtin_shufflevector(e0, o0, 4, 12, 5, 13, 6, 14, 7, 15);
    b[0] = __builtin_shufflevector(e1, o1, 0, 8, 1, 9, 2, 10, 3, 11);
    b[1] = __builtin_shufflevector(e1, o1, 4, 12, 5, 13, 6, 14, 7, 15);
  }
}

// One weight row against kInputs activation rows in one pass over the row: each weight vector
// is loaded once for kInputs products. Each 16-column half is 16 / W vectors. xChunks: the
// inputs as the chunks meet them (paired inputs when kPaired, else x).
template <typename R, int kInputs, int W, bool kPaired = false>
__attribute__((always_inline)) inline void rowTimesSomeInputs(R wr, const float* x,
                                                              const float* xChunks, int64_t cols,
                                                              int64_t rows, float* yr,
                                                              FourLaneTotals& totals) {
  using F = typename Vec<W>::Floats;
  constexpr int kParts = 16 / W;
  const int64_t pairs = cols / 32 * 32;
  const int64_t tailStart = pairs + (cols - pairs >= 16 ? 16 : 0);  // after one more full half
  F a[kInputs][kParts] = {}, b[kInputs][kParts] = {};
  for (int64_t k = 0; k < pairs; k += 32) {
#pragma GCC unroll 4
    for (int p = 0; p < kParts; ++p) {
      F w0, w1;
      loadChunkPart<R, W, kPaired>(wr, k, p, w0, w1);
      if constexpr (kInputs > 1) STRATA_IN_REGISTERS(w0, w1);
      const auto [at0, at1] = chunkInputs<W, kPaired>(p);
#pragma GCC unroll 4
      for (int j = 0; j < kInputs; ++j) {
        a[j][p] += w0 * STRATA_LOAD(W, xChunks + j * cols + k + at0);
        b[j][p] += w1 * STRATA_LOAD(W, xChunks + j * cols + k + at1);
      }
    }
  }
  if constexpr (kPaired)
    for (int j = 0; j < kInputs; ++j) unpairSums<W>(a[j], b[j]);
  addHalves<R, kInputs, W>(wr, x, cols, pairs, tailStart, a);  // one more full half, if any
  addTail<R, kInputs, W>(wr, x, cols, tailStart, a);
#pragma GCC unroll 4
  for (int j = 0; j < kInputs; ++j) totals.add(foldToFour<W>(a[j], b[j]), yr + j * rows);
}

// kRows weight rows against kInputs inputs, their chunks interleaved: with 16 or 8 lanes a
// row's dot is two chains of adds per input (16 / W vectors each), one add per 32 columns, so
// one input of a lone row waits on the add's latency; kRows rows give kRows times the
// independent adds. Decode's one input, four rows, on cache-resident rows of 256 columns
// (one thread, AVX-512): f32 1.5x the rate, bf16 1.9x with pairing; AVX2 1.4x and 1.2x.
// Each row's sums are rowTimesSomeInputs<R, kInputs, W>'s, in its order: the same bits.
template <typename R, int kRows, int kInputs, int W, bool kPaired>
__attribute__((always_inline)) inline void someRowsTimesSomeInputs(const R* wr, const float* x,
                                                                   const float* xChunks,
                                                                   int64_t cols, int64_t rows,
                                                                   float* y,
                                                                   FourLaneTotals& totals) {
  using F = typename Vec<W>::Floats;
  constexpr int kParts = 16 / W;
  const int64_t pairs = cols / 32 * 32;
  const int64_t tailStart = pairs + (cols - pairs >= 16 ? 16 : 0);
  F a[kRows][kInputs][kParts] = {}, b[kRows][kInputs][kParts] = {};
  for (int64_t k = 0; k < pairs; k += 32) {
#pragma GCC unroll 4
    for (int p = 0; p < kParts; ++p) {
      const auto [at0, at1] = chunkInputs<W, kPaired>(p);
      F x0[kInputs], x1[kInputs];
#pragma GCC unroll 4
      for (int j = 0; j < kInputs; ++j) {
        x0[j] = STRATA_LOAD(W, xChunks + j * cols + k + at0);
        x1[j] = STRATA_LOAD(W, xChunks + j * cols + k + at1);
      }
#pragma GCC unroll 8
      for (int r = 0; r < kRows; ++r) {
        F w0, w1;
        loadChunkPart<R, W, kPaired>(wr[r], k, p, w0, w1);
#pragma GCC unroll 4
        for (int j = 0; j < kInputs; ++j) {
          a[r][j][p] += w0 * x0[j];
          b[r][j][p] += w1 * x1[j];
        }
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
    if constexpr (kPaired)
      for (int j = 0; j < kInputs; ++j) unpairSums<W>(a[r][j], b[r][j]);
    addHalves<R, kInputs, W>(wr[r], x, cols, pairs, tailStart, a[r]);
    addTail<R, kInputs, W>(wr[r], x, cols, tailStart, a[r]);
#pragma GCC unroll 4
    for (int j = 0; j < kInputs; ++j) totals.add(foldToFour<W>(a[r][j], b[r][j]), y + j * rows + r);
  }
}

// The same sums for kInputs inputs in two passes over the row: the first 16 columns of every
// 32 (and a remainder, as above) into `a`, then the second 16 into `b`. Each pass keeps only
// half the sums in registers, so where a single pass holds two inputs' sums (AVX2's 16
// registers: 2 inputs x 4 vectors of sums + weights + a product) this one holds four, and a
// weight vector widened from bf16 serves four products instead of two. The order of every sum
// is the single pass's, so the results are the same bits.
template <typename R, int kInputs, int W>
__attribute__((always_inline)) inline void rowTimesSomeInputsInHalves(R wr, const float* x,
                                                                      int64_t cols, int64_t rows,
                                                                      float* yr,
                                                                      FourLaneTotals& totals) {
  using F = typename Vec<W>::Floats;
  constexpr int kParts = 16 / W;
  const int64_t pairs = cols / 32 * 32;
  const int64_t tailStart = pairs + (cols - pairs >= 16 ? 16 : 0);  // after one more full half
  F a[kInputs][kParts] = {}, b[kInputs][kParts] = {};
  addHalves<R, kInputs, W>(wr, x, cols, 0, tailStart, a);
  addTail<R, kInputs, W>(wr, x, cols, tailStart, a);
  addHalves<R, kInputs, W>(wr, x, cols, 16, pairs, b);
#pragma GCC unroll 4
  for (int j = 0; j < kInputs; ++j) totals.add(foldToFour<W>(a[j], b[j]), yr + j * rows);
}

// One weight row against n activation rows: kMaxInputs inputs per pass (as many as the
// registers hold with their sums), then the rest in one pass when their values fit in L1
// together (a 32 KiB L1 is the common size), else one by one (measured with `bench kernels`
// rows f32/bf16_matmul3: on 6,144-column rows three inputs in one pass were ~10 % slower than
// one at a time; on 2,048-column rows up to 2x faster). With kHalvesInputs (4, or 0 for none),
// more than kMaxInputs inputs of rows up to 768 columns go four (and a last three) at a time
// through rowTimesSomeInputsInHalves: 1.1-1.3x on cache-resident rows of 256 and 640 columns
// (three to eight inputs); from 1,024 columns, with four inputs' values filling half the L1 or
// more, as low as 0.65x.
// xPaired: the inputs paired (pairInputs) for bf16's paired rows, or null.
template <typename R, int kMaxInputs, int kHalvesInputs, int W>
__attribute__((always_inline)) inline void rowTimesInputsOf(R wr, const float* x, int64_t n,
                                                            int64_t cols, int64_t rows, float* yr,
                                                            FourLaneTotals& totals,
                                                            const float* xPaired = nullptr) {
  constexpr int64_t kL1Floats = 8192;
  // Inputs i .. i + kInputs - 1 in one pass.
  auto pass = [&](auto inputs, int64_t i) __attribute__((always_inline)) {
    constexpr int kInputs = decltype(inputs)::value;
    if constexpr (kPairable<R, W>) {
      if (xPaired) {
        rowTimesSomeInputs<R, kInputs, W, true>(wr, x + i * cols, xPaired + i * cols, cols, rows,
                                                yr + i * rows, totals);
        return;
      }
    }
    rowTimesSomeInputs<R, kInputs, W>(wr, x + i * cols, x + i * cols, cols, rows, yr + i * rows,
                                      totals);
  };
  using One = std::integral_constant<int, 1>;
  int64_t i = 0;
  if constexpr (kHalvesInputs == 4) {
    if (n > kMaxInputs && cols <= 768) {
      for (; i + 4 <= n; i += 4)
        rowTimesSomeInputsInHalves<R, 4, W>(wr, x + i * cols, cols, rows, yr + i * rows, totals);
      if (n - i == 3) {
        rowTimesSomeInputsInHalves<R, 3, W>(wr, x + i * cols, cols, rows, yr + i * rows, totals);
        return;
      }
    }
  } else {
    static_assert(kHalvesInputs == 0, "four inputs in halves, or none");
  }
  for (; i + kMaxInputs <= n; i += kMaxInputs) pass(std::integral_constant<int, kMaxInputs>{}, i);
  if ((n - i) * cols > kL1Floats) {
    for (; i < n; ++i) pass(One{}, i);
    return;
  }
  switch (n - i) {
    case 3:
      if constexpr (kMaxInputs > 3) pass(std::integral_constant<int, 3>{}, i);
      break;
    case 2:
      if constexpr (kMaxInputs > 2) pass(std::integral_constant<int, 2>{}, i);
      break;
    case 1:
      pass(One{}, i);
      break;
    default:
      break;
  }
}

// `count` consecutive weight rows (row r at w + r * cols, its outputs at y[i * rows + r]), the
// last steps of their dots four at a time; bf16 rows paired where xPaired holds the paired
// inputs. Rows up to kInterleavedCols wide (a small model's) go several at a time
// (someRowsTimesSomeInputs): four adjacent rows are then one stretch of memory, where wider
// ones would be four streams, which an earlier two-row pass showed can defeat a hardware
// prefetcher (0.62-0.69x sweeping memory on a Zen 3).
template <typename T, int kMaxInputs, int kHalvesInputs, int W>
__attribute__((always_inline)) inline void rowsTimesInputsOf(const T* w, int64_t count,
                                                             const float* x, int64_t n,
                                                             int64_t cols, int64_t rows, float* y,
                                                             const float* xPaired = nullptr) {
  constexpr bool kPairs = kPairable<const T*, W>;
  constexpr int64_t kInterleavedCols = 1024;
  if constexpr (!kPairs) xPaired = nullptr;
  FourLaneTotals totals;
  int64_t r = 0;
  // kRows rows of kInputs inputs at a time (their sums and inputs in registers).
  auto interleave = [&](auto rowCount, auto inputs) __attribute__((always_inline)) {
    constexpr int kRows = decltype(rowCount)::value, kInputs = decltype(inputs)::value;
    for (; r + kRows <= count; r += kRows) {
      const T* wr[kRows];
      for (int k = 0; k < kRows; ++k) wr[k] = w + (r + k) * cols;
      if (xPaired)
        someRowsTimesSomeInputs<const T*, kRows, kInputs, W, kPairs>(wr, x, xPaired, cols, rows,
                                                                     y + r, totals);
      else
        someRowsTimesSomeInputs<const T*, kRows, kInputs, W, false>(wr, x, x, cols, rows, y + r,
                                                                    totals);
    }
  };
  using std::integral_constant;
  // With four lanes a row's sums are already eight vectors, eight chains: no gain (SSE2).
  if constexpr (W >= 8) {
    if (n == 1 && cols <= kInterleavedCols)
      interleave(integral_constant<int, 4>{}, integral_constant<int, 1>{});
  }
  // Paired bf16 rows with AVX-512 also two rows at a time for two to four inputs (a verify
  // pass): 1.3-1.35x on cache-resident 256-column rows. Not f32 (three inputs ~0.75x) nor AVX2
  // (whose 16 registers hold one row's sums for two inputs).
  if constexpr (kPairs && W == 16) {
    if (xPaired && cols <= kInterleavedCols) {
      if (n == 2) interleave(integral_constant<int, 2>{}, integral_constant<int, 2>{});
      if (n == 3) interleave(integral_constant<int, 2>{}, integral_constant<int, 3>{});
      if (n == 4) interleave(integral_constant<int, 2>{}, integral_constant<int, 4>{});
    }
  }
  for (; r < count; ++r)
    rowTimesInputsOf<const T*, kMaxInputs, kHalvesInputs, W>(w + r * cols, x, n, cols, rows, y + r,
                                                             totals, xPaired);
  totals.flush();
}

// The same for rows of an int8 matrix.
template <int kMaxInputs, int kHalvesInputs, int W>
__attribute__((always_inline)) inline void int8RowsTimesInputsOf(const Int8Rows& w, int64_t count,
                                                                 const float* x, int64_t n,
                                                                 int64_t cols, int64_t rows,
                                                                 float* y) {
  FourLaneTotals totals;
  const auto* codes = reinterpret_cast<const char*>(w.codes);
  const int64_t bytes = count * w.rowBytes;
  for (int64_t r = 0; r < count; ++r) {
    // a few rows ahead: each row is a short stream the hardware prefetcher barely starts on
    for (int64_t at = (r + 4) * w.rowBytes; at < std::min((r + 5) * w.rowBytes, bytes); at += 64)
      __builtin_prefetch(codes + at, 0, 3);
    rowTimesInputsOf<Int8Row, kMaxInputs, kHalvesInputs, W>(w[r], x, n, cols, rows, y + r, totals);
  }
  totals.flush();
}

// The same for rows anywhere in memory, row r at rows[r].
template <int kMaxInputs, int kHalvesInputs, int W>
__attribute__((always_inline)) inline void gatheredRowsTimesInputsOf(const float* const* rows,
                                                                     int64_t count, const float* x,
                                                                     int64_t n, int64_t cols,
                                                                     int64_t outStride, float* y) {
  FourLaneTotals totals;
  for (int64_t r = 0; r < count; ++r)
    rowTimesInputsOf<const float*, kMaxInputs, kHalvesInputs, W>(rows[r], x, n, cols, outStride,
                                                                 y + r, totals);
  totals.flush();
}

// addScaledRows for kN outputs: each block of two vectors of the outputs stays in registers
// while every row adds into it, in row order; leftover columns one by one, also in row order.
// Each output's sums are in row order whatever the width.
template <int kN, int W, typename Rows>
__attribute__((always_inline)) inline void addScaledRowsOf(const Rows& rows, int64_t count,
                                                           const float* scales, int64_t scaleStride,
                                                           int64_t cols, float* out,
                                                           int64_t outStride) {
  using F = typename Vec<W>::Floats;
  constexpr int64_t kBlock = 2 * W;
  int64_t j = 0;
  for (; j + kBlock <= cols; j += kBlock) {
    F a[kN], b[kN];
#pragma GCC unroll 4
    for (int i = 0; i < kN; ++i) {
      a[i] = STRATA_LOAD(W, out + i * outStride + j);
      b[i] = STRATA_LOAD(W, out + i * outStride + j + W);
    }
    for (int64_t r = 0; r < count; ++r) {
      using R = std::decay_t<decltype(rows[r])>;
      F k0, k1;
      STRATA_LOAD_WEIGHTS_PAIR(W, R, rows[r] + j, k0, k1);
#pragma GCC unroll 4
      for (int i = 0; i < kN; ++i) {
        const float s = scales[i * scaleStride + r];
        a[i] += s * k0;
        b[i] += s * k1;
      }
    }
#pragma GCC unroll 4
    for (int i = 0; i < kN; ++i) {
      std::memcpy(out + i * outStride + j, &a[i], sizeof a[i]);
      std::memcpy(out + i * outStride + j + W, &b[i], sizeof b[i]);
    }
  }
  for (; j < cols; ++j)
    for (int i = 0; i < kN; ++i) {
      float o = out[i * outStride + j];
      for (int64_t r = 0; r < count; ++r) o += scales[i * scaleStride + r] * rows[r][j];
      out[i * outStride + j] = o;
    }
}

// Calls pass(std::integral_constant<int, k>{}, i) for inputs i .. i + k - 1, in passes of four
// and a last one of one to three, so each pass runs a kernel instantiated for its input count.
// The pass is an always-inlined lambda: it must expand inside the per-width entry point.
template <typename Pass>
__attribute__((always_inline)) inline void inPassesOfFour(int64_t n, Pass&& pass) {
  for (int64_t i = 0; i < n; i += 4) {
    switch (std::min<int64_t>(4, n - i)) {
      case 4:
        pass(std::integral_constant<int, 4>{}, i);
        break;
      case 3:
        pass(std::integral_constant<int, 3>{}, i);
        break;
      case 2:
        pass(std::integral_constant<int, 2>{}, i);
        break;
      default:
        pass(std::integral_constant<int, 1>{}, i);
        break;
    }
  }
}

template <int W, typename Rows>
__attribute__((always_inline)) inline void addScaledRowsIn(const Rows& rows, int64_t count,
                                                           const float* scales, int64_t scaleStride,
                                                           int64_t n, int64_t cols, float* out,
                                                           int64_t outStride) {
  inPassesOfFour(
      n, [&](auto inputs, int64_t i) __attribute__((always_inline)) {
        addScaledRowsOf<decltype(inputs)::value, W, Rows>(rows, count, scales + i * scaleStride,
                                                          scaleStride, cols, out + i * outStride,
                                                          outStride);
      });
}

// The entry points per width: 32 registers of 16 floats take four inputs' sums at once; 16 of
// 8 (AVX2) and 32 of 4 (NEON) hold a quarter as many floats, so two.
#if defined(__x86_64__)
#define STRATA_TARGET_16 __attribute__((target("avx512f")))
#define STRATA_TARGET_8 __attribute__((target("avx2")))
int vectorWidth() {  // asked once: the kernels run per cached key
  static const int width = __builtin_cpu_supports("avx512f") ? 16
                           : __builtin_cpu_supports("avx2")  ? 8
                                                             : 4;
  return width;
}
#else
#define STRATA_TARGET_16
#define STRATA_TARGET_8
constexpr int vectorWidth() { return 4; }
#endif

STRATA_TARGET_16 void rowsTimesInputs16(const float* w, int64_t count, const float* x, int64_t n,
                                        int64_t cols, int64_t rows, float* y) {
  rowsTimesInputsOf<float, 4, 0, 16>(w, count, x, n, cols, rows, y);
}
STRATA_TARGET_8 void rowsTimesInputs8(const float* w, int64_t count, const float* x, int64_t n,
                                      int64_t cols, int64_t rows, float* y) {
  rowsTimesInputsOf<float, 2, 4, 8>(w, count, x, n, cols, rows, y);
}
void rowsTimesInputs4(const float* w, int64_t count, const float* x, int64_t n, int64_t cols,
                      int64_t rows, float* y) {
  rowsTimesInputsOf<float, 2, 0, 4>(w, count, x, n, cols, rows, y);
}

STRATA_TARGET_16 void gatheredRowsTimesInputs16(const float* const* rows, int64_t count,
                                                const float* x, int64_t n, int64_t cols,
                                                int64_t outStride, float* y) {
  gatheredRowsTimesInputsOf<4, 0, 16>(rows, count, x, n, cols, outStride, y);
}
STRATA_TARGET_8 void gatheredRowsTimesInputs8(const float* const* rows, int64_t count,
                                              const float* x, int64_t n, int64_t cols,
                                              int64_t outStride, float* y) {
  gatheredRowsTimesInputsOf<2, 4, 8>(rows, count, x, n, cols, outStride, y);
}
void gatheredRowsTimesInputs4(const float* const* rows, int64_t count, const float* x, int64_t n,
                              int64_t cols, int64_t outStride, float* y) {
  gatheredRowsTimesInputsOf<2, 0, 4>(rows, count, x, n, cols, outStride, y);
}

STRATA_TARGET_16 void bf16RowsTimesInputs16(const uint16_t* w, int64_t count, const float* x,
                                            int64_t n, int64_t cols, int64_t rows, float* y,
                                            const float* xPaired) {
  rowsTimesInputsOf<uint16_t, 4, 0, 16>(w, count, x, n, cols, rows, y, xPaired);
}
STRATA_TARGET_8 void bf16RowsTimesInputs8(const uint16_t* w, int64_t count, const float* x,
                                          int64_t n, int64_t cols, int64_t rows, float* y,
                                          const float* xPaired) {
  rowsTimesInputsOf<uint16_t, 2, 4, 8>(w, count, x, n, cols, rows, y, xPaired);
}
void bf16RowsTimesInputs4(const uint16_t* w, int64_t count, const float* x, int64_t n, int64_t cols,
                          int64_t rows, float* y, const float*) {
  rowsTimesInputsOf<uint16_t, 2, 0, 4>(w, count, x, n, cols, rows, y);
}

STRATA_TARGET_16 void pairInputs16(const float* x, int64_t n, int64_t cols, float* paired) {
  pairInputs<16>(x, n, cols, paired);
}
STRATA_TARGET_8 void pairInputs8(const float* x, int64_t n, int64_t cols, float* paired) {
  pairInputs<8>(x, n, cols, paired);
}

STRATA_TARGET_16 void int8RowsTimesInputs16(const Int8Rows& w, int64_t count, const float* x,
                                            int64_t n, int64_t cols, int64_t rows, float* y) {
  int8RowsTimesInputsOf<4, 0, 16>(w, count, x, n, cols, rows, y);
}
STRATA_TARGET_8 void int8RowsTimesInputs8(const Int8Rows& w, int64_t count, const float* x,
                                          int64_t n, int64_t cols, int64_t rows, float* y) {
  int8RowsTimesInputsOf<2, 4, 8>(w, count, x, n, cols, rows, y);
}
void int8RowsTimesInputs4(const Int8Rows& w, int64_t count, const float* x, int64_t n, int64_t cols,
                          int64_t rows, float* y) {
  int8RowsTimesInputsOf<2, 0, 4>(w, count, x, n, cols, rows, y);
}

STRATA_TARGET_16 void addScaledRows16(const float* const* rows, int64_t count, const float* scales,
                                      int64_t scaleStride, int64_t n, int64_t cols, float* out,
                                      int64_t outStride) {
  addScaledRowsIn<16>(rows, count, scales, scaleStride, n, cols, out, outStride);
}
STRATA_TARGET_8 void addScaledRows8(const float* const* rows, int64_t count, const float* scales,
                                    int64_t scaleStride, int64_t n, int64_t cols, float* out,
                                    int64_t outStride) {
  addScaledRowsIn<8>(rows, count, scales, scaleStride, n, cols, out, outStride);
}
void addScaledRows4(const float* const* rows, int64_t count, const float* scales,
                    int64_t scaleStride, int64_t n, int64_t cols, float* out, int64_t outStride) {
  addScaledRowsIn<4>(rows, count, scales, scaleStride, n, cols, out, outStride);
}

STRATA_TARGET_16 void int8AddScaledRows16(const Int8Rows& rows, int64_t count, const float* scales,
                                          int64_t scaleStride, int64_t n, int64_t cols, float* out,
                                          int64_t outStride) {
  addScaledRowsIn<16>(rows, count, scales, scaleStride, n, cols, out, outStride);
}
STRATA_TARGET_8 void int8AddScaledRows8(const Int8Rows& rows, int64_t count, const float* scales,
                                        int64_t scaleStride, int64_t n, int64_t cols, float* out,
                                        int64_t outStride) {
  addScaledRowsIn<8>(rows, count, scales, scaleStride, n, cols, out, outStride);
}
void int8AddScaledRows4(const Int8Rows& rows, int64_t count, const float* scales,
                        int64_t scaleStride, int64_t n, int64_t cols, float* out,
                        int64_t outStride) {
  addScaledRowsIn<4>(rows, count, scales, scaleStride, n, cols, out, outStride);
}

// Rows first .. first + count - 1 of an int8 matrix.
Int8Rows int8Rows(const quant::QuantizedMatrix& w, int64_t first, int64_t count) {
  if (w.format != quant::IntFormat::Int8 || first < 0 || first + count > w.rows)
    throw Error("int8 row kernels: rows " + std::to_string(first) + " + " + std::to_string(count) +
                " of a " + std::to_string(w.rows) + "-row " +
                (w.format == quant::IntFormat::Int8 ? "int8" : "int4") + " matrix");
  // log2 of the group size in columns, or past any column with one scale per row.
  const int blockShift = groupShiftOf(w.groupSize, w.paddedCols);
  const int shift = blockShift >= 62 ? 62 : blockShift + std::countr_zero(uint64_t{quant::kBlock});
  const auto* codes = reinterpret_cast<const int8_t*>(w.codes());
  return {codes + first * w.rowBytes(), w.scaleValues() + first * w.groupsPerRow(), w.rowBytes(),
          w.groupsPerRow(), shift};
}

// Asks for the rows' codes (up to 256 KiB) before addScaledRows reads them: absorbed attention's
// kv_b rows come from memory, and addScaledRows visits each row once per column block, a stride
// the hardware prefetcher follows one miss at a time (the dots read rows in address order and
// gain nothing from it).
void prefetchCodes(const Int8Rows& rows, int64_t count) {
  constexpr int64_t kMaxBytes = 256 * 1024;
  const auto* codes = reinterpret_cast<const char*>(rows.codes);
  const int64_t bytes = std::min(count * rows.rowBytes, kMaxBytes);
  for (int64_t at = 0; at < bytes; at += 64) __builtin_prefetch(codes + at, 0, 3);
}

// Calls the entry point of this CPU's width.
template <typename... Args>
void atWidth(void (*width16)(Args...), void (*width8)(Args...), void (*width4)(Args...),
             std::type_identity_t<Args>... args) {
  switch (vectorWidth()) {
    case 16:
      return width16(args...);
    case 8:
      return width8(args...);
    default:
      return width4(args...);
  }
}

}  // namespace

void rowTimesInputs(const float* wr, const float* x, int64_t n, int64_t cols, int64_t rows,
                    float* yr) {
  rowsTimesInputs(wr, 1, x, n, cols, rows, yr);
}

void rowsTimesInputs(const float* w, int64_t count, const float* x, int64_t n, int64_t cols,
                     int64_t rows, float* y) {
  atWidth(rowsTimesInputs16, rowsTimesInputs8, rowsTimesInputs4, w, count, x, n, cols, rows, y);
}

void gatheredRowsTimesInputs(const float* const* rows, int64_t count, const float* x, int64_t n,
                             int64_t cols, int64_t outStride, float* y) {
  atWidth(gatheredRowsTimesInputs16, gatheredRowsTimesInputs8, gatheredRowsTimesInputs4, rows,
          count, x, n, cols, outStride, y);
}

std::vector<float> bf16PairedInputs(const float* x, int64_t n, int64_t cols) {
  const int width = vectorWidth();
  if (width < 8 || cols < 32) return {};
  std::vector<float> paired(static_cast<size_t>(n * cols));
  (width == 16 ? pairInputs16 : pairInputs8)(x, n, cols, paired.data());
  return paired;
}

void bf16RowsTimesInputs(const uint16_t* w, int64_t count, const float* x, int64_t n, int64_t cols,
                         int64_t rows, float* y, const float* xPaired) {
  atWidth(bf16RowsTimesInputs16, bf16RowsTimesInputs8, bf16RowsTimesInputs4, w, count, x, n, cols,
          rows, y, xPaired);
}

void addScaledRows(const float* const* rows, int64_t count, const float* scales,
                   int64_t scaleStride, int64_t n, int64_t cols, float* out, int64_t outStride) {
  atWidth(addScaledRows16, addScaledRows8, addScaledRows4, rows, count, scales, scaleStride, n,
          cols, out, outStride);
}

void int8RowsTimesInputs(const quant::QuantizedMatrix& w, int64_t first, int64_t count,
                         const float* x, int64_t n, int64_t rows, float* y) {
  atWidth(int8RowsTimesInputs16, int8RowsTimesInputs8, int8RowsTimesInputs4,
          int8Rows(w, first, count), count, x, n, w.cols, rows, y);
}

void int8AddScaledRows(const quant::QuantizedMatrix& w, int64_t first, int64_t count,
                       const float* scales, int64_t scaleStride, int64_t n, float* out,
                       int64_t outStride) {
  const Int8Rows r = int8Rows(w, first, count);
  prefetchCodes(r, count);
  atWidth(int8AddScaledRows16, int8AddScaledRows8, int8AddScaledRows4, r, count, scales,
          scaleStride, n, w.cols, out, outStride);
}

}  // namespace strata::kernels
