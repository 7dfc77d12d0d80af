// The f32 row kernels of matmul.h (rowTimesInputs, bf16RowTimesInputs, addScaledRows,
// transposedTimesInputs), each built for three vector widths and picked per call by the CPU:
// 16 floats (AVX-512), 8 (AVX2) and 4 (baseline SSE2, NEON), so the binary runs on any x86-64
// without -march=native.
//
// A dot product is 32 partial sums (two 16-column halves of each 32-column chunk, so two add
// chains hide each other's latency), then a pairwise sum; a tail under 16 goes into the first
// half. The order depends only on `cols`, never on how many inputs are computed together nor
// on the vector width (no FMA contraction in this project), so a row's result is bit-identical
// in a batch and alone (speculative verification relies on that) and on every CPU.
//
// The bodies are always-inlined templates over the weights' type (f32, or bf16 widened in
// registers: exact, so a bf16 row gives what its widened f32 row gives) and the width, expanded
// inside each per-width entry point (a function they called would not be compiled for its
// target). The width is always the target's register width: GCC 12 keeps a vector wider than
// the registers in memory, moved through general registers (with AVX-512's 16-float vectors on
// AVX2 these kernels took 30 % of a decode step on a Zen 3, ~10x their cost here).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/matmul.h"

namespace strata::kernels {
namespace {

// GCC vector extensions of W floats, and the 16-bit halves and 32-bit words bf16 widening uses.
template <int W>
struct Vec {
  typedef float Floats __attribute__((vector_size(W * 4)));
  typedef uint16_t Halves __attribute__((vector_size(W * 2)));
  typedef uint32_t Words __attribute__((vector_size(W * 4)));
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
// bf16 is the top half of a binary32: widening is a shift.
#define STRATA_LOAD_BF16(W, p)                                                 \
  ({                                                                           \
    typename Vec<W>::Halves h_;                                                \
    std::memcpy(&h_, (p), sizeof h_);                                          \
    const auto w_ = __builtin_convertvector(h_, typename Vec<W>::Words) << 16; \
    typename Vec<W>::Floats v_;                                                \
    std::memcpy(&v_, &w_, sizeof v_);                                          \
    v_;                                                                        \
  })
#define STRATA_LOAD_TAIL_BF16(W, p, count)                                     \
  ({                                                                           \
    typename Vec<W>::Words w_ = {};                                            \
    for (int64_t l_ = 0; l_ < (count); ++l_) w_[l_] = uint32_t{(p)[l_]} << 16; \
    typename Vec<W>::Floats v_;                                                \
    std::memcpy(&v_, &w_, sizeof v_);                                          \
    v_;                                                                        \
  })
// W weights of type T from p as f32 lanes (the first `count` of them for the tail).
#define STRATA_LOAD_WEIGHTS(W, T, p) \
  ({                                 \
    typename Vec<W>::Floats l_;      \
    if constexpr (sizeof(T) == 2)    \
      l_ = STRATA_LOAD_BF16(W, p);   \
    else                             \
      l_ = STRATA_LOAD(W, p);        \
    l_;                              \
  })
#define STRATA_LOAD_WEIGHTS_TAIL(W, T, p, count) \
  ({                                             \
    typename Vec<W>::Floats l_;                  \
    if constexpr (sizeof(T) == 2)                \
      l_ = STRATA_LOAD_TAIL_BF16(W, p, count);   \
    else                                         \
      l_ = STRATA_LOAD_TAIL(W, p, count);        \
    l_;                                          \
  })

typedef Vec<16>::Floats Lanes16;
typedef Vec<8>::Floats Lanes8;
typedef Vec<4>::Floats Lanes4;
// The pairwise sum of 16 lanes: s[l] += s[l + 8], then + 4, + 2, + 1, in registers.
#define STRATA_HORIZONTAL_SUM(v)                                                    \
  ({                                                                                \
    const Lanes8 h8_ = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +      \
                       __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15); \
    const Lanes4 h4_ = __builtin_shufflevector(h8_, h8_, 0, 1, 2, 3) +              \
                       __builtin_shufflevector(h8_, h8_, 4, 5, 6, 7);               \
    const float h0_ = h4_[0] + h4_[2], h1_ = h4_[1] + h4_[3];                       \
    h0_ + h1_;                                                                      \
  })
// The pairwise sums of four 16-lane vectors at once, transposed: each step adds the same lanes
// STRATA_HORIZONTAL_SUM adds, for four vectors in one instruction, so each result is
// bit-identical to that vector's own sum.
#define STRATA_HORIZONTAL_SUMS4(s0, s1, s2, s3, out)                                               \
  do {                                                                                             \
    const Lanes16 t01_ =                                                                           \
        __builtin_shufflevector(s0, s1, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +  \
        __builtin_shufflevector(s0, s1, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30,  \
                                31);                                                               \
    const Lanes16 t23_ =                                                                           \
        __builtin_shufflevector(s2, s3, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +  \
        __builtin_shufflevector(s2, s3, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30,  \
                                31);                                                               \
    const Lanes16 u_ = __builtin_shufflevector(t01_, t23_, 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18,   \
                                               19, 24, 25, 26, 27) +                               \
                       __builtin_shufflevector(t01_, t23_, 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, \
                                               23, 28, 29, 30, 31);                                \
    const Lanes8 v_ = __builtin_shufflevector(u_, u_, 0, 1, 4, 5, 8, 9, 12, 13) +                  \
                      __builtin_shufflevector(u_, u_, 2, 3, 6, 7, 10, 11, 14, 15);                 \
    const Lanes4 r_ =                                                                              \
        __builtin_shufflevector(v_, v_, 0, 2, 4, 6) + __builtin_shufflevector(v_, v_, 1, 3, 5, 7); \
    std::memcpy((out), &r_, sizeof r_);                                                            \
  } while (0)

// The same pairwise sum for 16 partial sums held as 16 / W vectors (a[p] + b[p] lane by lane
// first, as the 16-lane path adds its two halves).
template <int W>
__attribute__((always_inline)) inline float pairwiseSum(const typename Vec<W>::Floats* a,
                                                        const typename Vec<W>::Floats* b) {
  float s[16];
  for (int p = 0; p < 16 / W; ++p) {
    const typename Vec<W>::Floats v = a[p] + b[p];
    std::memcpy(s + p * W, &v, sizeof v);
  }
  float h8[8], h4[4];
  for (int l = 0; l < 8; ++l) h8[l] = s[l] + s[l + 8];
  for (int l = 0; l < 4; ++l) h4[l] = h8[l] + h8[l + 4];
  return (h4[0] + h4[2]) + (h4[1] + h4[3]);
}

// One weight row against kInputs activation rows in one pass over the row: each weight vector
// is loaded once for kInputs products. Each 16-column half is 16 / W vectors.
template <typename T, int kInputs, int W>
__attribute__((always_inline)) inline void rowTimesSomeInputs(const T* wr, const float* x,
                                                              int64_t cols, int64_t rows,
                                                              float* yr) {
  using F = typename Vec<W>::Floats;
  constexpr int kParts = 16 / W;
  const int64_t pairs = cols / 32 * 32;
  const bool single = cols - pairs >= 16;  // one more full half after the pairs
  const int64_t tailStart = pairs + (single ? 16 : 0);
  const int64_t tail = cols - tailStart;
  F a[kInputs][kParts] = {}, b[kInputs][kParts] = {};
  for (int64_t k = 0; k < pairs; k += 32) {
#pragma GCC unroll 4
    for (int p = 0; p < kParts; ++p) {
      const F w0 = STRATA_LOAD_WEIGHTS(W, T, wr + k + p * W);
      const F w1 = STRATA_LOAD_WEIGHTS(W, T, wr + k + 16 + p * W);
#pragma GCC unroll 4
      for (int j = 0; j < kInputs; ++j) {
        a[j][p] += w0 * STRATA_LOAD(W, x + j * cols + k + p * W);
        b[j][p] += w1 * STRATA_LOAD(W, x + j * cols + k + 16 + p * W);
      }
    }
  }
  if (single) {
#pragma GCC unroll 4
    for (int p = 0; p < kParts; ++p) {
      const F w0 = STRATA_LOAD_WEIGHTS(W, T, wr + pairs + p * W);
#pragma GCC unroll 4
      for (int j = 0; j < kInputs; ++j)
        a[j][p] += w0 * STRATA_LOAD(W, x + j * cols + pairs + p * W);
    }
  }
  if (tail > 0) {
    // Lanes past the tail add 0 * 0, as the 16-lane path does.
#pragma GCC unroll 4
    for (int p = 0; p < kParts; ++p) {
      const int64_t count = std::clamp<int64_t>(tail - p * W, 0, W);
      const F w0 = STRATA_LOAD_WEIGHTS_TAIL(W, T, wr + tailStart + p * W, count);
#pragma GCC unroll 4
      for (int j = 0; j < kInputs; ++j)
        a[j][p] += w0 * STRATA_LOAD_TAIL(W, x + j * cols + tailStart + p * W, count);
    }
  }
  if constexpr (W == 16 && kInputs == 1) {
    const Lanes16 s = a[0][0] + b[0][0];
    yr[0] = STRATA_HORIZONTAL_SUM(s);
  } else if constexpr (W == 16) {
    Lanes16 s[4] = {};  // unused inputs sum zeros
#pragma GCC unroll 4
    for (int j = 0; j < kInputs; ++j) s[j] = a[j][0] + b[j][0];
    float sums[4];
    STRATA_HORIZONTAL_SUMS4(s[0], s[1], s[2], s[3], sums);
#pragma GCC unroll 4
    for (int j = 0; j < kInputs; ++j) yr[j * rows] = sums[j];
  } else {
#pragma GCC unroll 4
    for (int j = 0; j < kInputs; ++j) yr[j * rows] = pairwiseSum<W>(a[j], b[j]);
  }
}

// One weight row against n activation rows: kMaxInputs inputs per pass (as many as the
// registers hold with their sums), then the rest in one pass when their values fit in L1
// together (a 32 KiB L1 is the common size), else one by one (measured with `bench kernels`
// rows f32/bf16_matmul3: on 6,144-column rows three inputs in one pass were ~10 % slower than
// one at a time; on 2,048-column rows up to 2x faster).
template <typename T, int kMaxInputs, int W>
__attribute__((always_inline)) inline void rowTimesInputsOf(const T* wr, const float* x, int64_t n,
                                                            int64_t cols, int64_t rows, float* yr) {
  constexpr int64_t kL1Floats = 8192;
  int64_t i = 0;
  for (; i + kMaxInputs <= n; i += kMaxInputs)
    rowTimesSomeInputs<T, kMaxInputs, W>(wr, x + i * cols, cols, rows, yr + i * rows);
  if ((n - i) * cols > kL1Floats) {
    for (; i < n; ++i) rowTimesSomeInputs<T, 1, W>(wr, x + i * cols, cols, rows, yr + i * rows);
    return;
  }
  switch (n - i) {
    case 3:
      if constexpr (kMaxInputs > 3)
        rowTimesSomeInputs<T, 3, W>(wr, x + i * cols, cols, rows, yr + i * rows);
      break;
    case 2:
      if constexpr (kMaxInputs > 2)
        rowTimesSomeInputs<T, 2, W>(wr, x + i * cols, cols, rows, yr + i * rows);
      break;
    case 1:
      rowTimesSomeInputs<T, 1, W>(wr, x + i * cols, cols, rows, yr + i * rows);
      break;
    default:
      break;
  }
}

// addScaledRows for kN outputs: each block of two vectors of the outputs stays in registers
// while every row adds into it, in row order; leftover columns one by one, also in row order.
// Each output's sums are in row order whatever the width.
template <int kN, int W>
__attribute__((always_inline)) inline void addScaledRowsOf(const float* const* rows, int64_t count,
                                                           const float* scales, int64_t scaleStride,
                                                           int64_t cols, float* out) {
  using F = typename Vec<W>::Floats;
  constexpr int64_t kBlock = 2 * W;
  int64_t j = 0;
  for (; j + kBlock <= cols; j += kBlock) {
    F a[kN], b[kN];
#pragma GCC unroll 4
    for (int i = 0; i < kN; ++i) {
      a[i] = STRATA_LOAD(W, out + i * cols + j);
      b[i] = STRATA_LOAD(W, out + i * cols + j + W);
    }
    for (int64_t r = 0; r < count; ++r) {
      const F k0 = STRATA_LOAD(W, rows[r] + j), k1 = STRATA_LOAD(W, rows[r] + j + W);
#pragma GCC unroll 4
      for (int i = 0; i < kN; ++i) {
        const float s = scales[i * scaleStride + r];
        a[i] += s * k0;
        b[i] += s * k1;
      }
    }
#pragma GCC unroll 4
    for (int i = 0; i < kN; ++i) {
      std::memcpy(out + i * cols + j, &a[i], sizeof a[i]);
      std::memcpy(out + i * cols + j + W, &b[i], sizeof b[i]);
    }
  }
  for (; j < cols; ++j)
    for (int i = 0; i < kN; ++i) {
      float o = out[i * cols + j];
      for (int64_t r = 0; r < count; ++r) o += scales[i * scaleStride + r] * rows[r][j];
      out[i * cols + j] = o;
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

template <int W>
__attribute__((always_inline)) inline void addScaledRowsIn(const float* const* rows, int64_t count,
                                                           const float* scales, int64_t scaleStride,
                                                           int64_t n, int64_t cols, float* out) {
  inPassesOfFour(
      n, [&](auto inputs, int64_t i) __attribute__((always_inline)) {
        addScaledRowsOf<decltype(inputs)::value, W>(rows, count, scales + i * scaleStride,
                                                    scaleStride, cols, out + i * cols);
      });
}

// transposedTimesInputs for kN inputs: a block of two vectors of each input's outputs stays in
// registers while the matrix's rows go by in order; leftover outputs one by one. Each output
// is one chain of adds in row order whatever the width.
template <int kN, int W>
__attribute__((always_inline)) inline void transposedTimesInputsOf(const float* wt, int64_t stride,
                                                                   int64_t cols, int64_t count,
                                                                   const float* x, float* y,
                                                                   int64_t yStride) {
  using F = typename Vec<W>::Floats;
  constexpr int64_t kBlock = 2 * W;
  int64_t t = 0;
  for (; t + kBlock <= count; t += kBlock) {
    F a[kN] = {}, b[kN] = {};
    for (int64_t j = 0; j < cols; ++j) {
      const F k0 = STRATA_LOAD(W, wt + j * stride + t),
              k1 = STRATA_LOAD(W, wt + j * stride + t + W);
#pragma GCC unroll 4
      for (int i = 0; i < kN; ++i) {
        const float s = x[i * cols + j];
        a[i] += s * k0;
        b[i] += s * k1;
      }
    }
#pragma GCC unroll 4
    for (int i = 0; i < kN; ++i) {
      std::memcpy(y + i * yStride + t, &a[i], sizeof a[i]);
      std::memcpy(y + i * yStride + t + W, &b[i], sizeof b[i]);
    }
  }
  for (; t < count; ++t)
    for (int i = 0; i < kN; ++i) {
      float sum = 0.0f;
      for (int64_t j = 0; j < cols; ++j) sum += x[i * cols + j] * wt[j * stride + t];
      y[i * yStride + t] = sum;
    }
}

template <int W>
__attribute__((always_inline)) inline void transposedTimesInputsIn(const float* wt, int64_t stride,
                                                                   int64_t cols, int64_t count,
                                                                   const float* x, int64_t n,
                                                                   float* y, int64_t yStride) {
  inPassesOfFour(
      n, [&](auto inputs, int64_t i) __attribute__((always_inline)) {
        transposedTimesInputsOf<decltype(inputs)::value, W>(wt, stride, cols, count, x + i * cols,
                                                            y + i * yStride, yStride);
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

STRATA_TARGET_16 void rowTimesInputs16(const float* wr, const float* x, int64_t n, int64_t cols,
                                       int64_t rows, float* yr) {
  rowTimesInputsOf<float, 4, 16>(wr, x, n, cols, rows, yr);
}
STRATA_TARGET_8 void rowTimesInputs8(const float* wr, const float* x, int64_t n, int64_t cols,
                                     int64_t rows, float* yr) {
  rowTimesInputsOf<float, 2, 8>(wr, x, n, cols, rows, yr);
}
void rowTimesInputs4(const float* wr, const float* x, int64_t n, int64_t cols, int64_t rows,
                     float* yr) {
  rowTimesInputsOf<float, 2, 4>(wr, x, n, cols, rows, yr);
}

STRATA_TARGET_16 void bf16RowTimesInputs16(const uint16_t* wr, const float* x, int64_t n,
                                           int64_t cols, int64_t rows, float* yr) {
  rowTimesInputsOf<uint16_t, 4, 16>(wr, x, n, cols, rows, yr);
}
STRATA_TARGET_8 void bf16RowTimesInputs8(const uint16_t* wr, const float* x, int64_t n,
                                         int64_t cols, int64_t rows, float* yr) {
  rowTimesInputsOf<uint16_t, 2, 8>(wr, x, n, cols, rows, yr);
}
void bf16RowTimesInputs4(const uint16_t* wr, const float* x, int64_t n, int64_t cols, int64_t rows,
                         float* yr) {
  rowTimesInputsOf<uint16_t, 2, 4>(wr, x, n, cols, rows, yr);
}

STRATA_TARGET_16 void addScaledRows16(const float* const* rows, int64_t count, const float* scales,
                                      int64_t scaleStride, int64_t n, int64_t cols, float* out) {
  addScaledRowsIn<16>(rows, count, scales, scaleStride, n, cols, out);
}
STRATA_TARGET_8 void addScaledRows8(const float* const* rows, int64_t count, const float* scales,
                                    int64_t scaleStride, int64_t n, int64_t cols, float* out) {
  addScaledRowsIn<8>(rows, count, scales, scaleStride, n, cols, out);
}
void addScaledRows4(const float* const* rows, int64_t count, const float* scales,
                    int64_t scaleStride, int64_t n, int64_t cols, float* out) {
  addScaledRowsIn<4>(rows, count, scales, scaleStride, n, cols, out);
}

STRATA_TARGET_16 void transposedTimesInputs16(const float* wt, int64_t stride, int64_t cols,
                                              int64_t count, const float* x, int64_t n, float* y,
                                              int64_t yStride) {
  transposedTimesInputsIn<16>(wt, stride, cols, count, x, n, y, yStride);
}
STRATA_TARGET_8 void transposedTimesInputs8(const float* wt, int64_t stride, int64_t cols,
                                            int64_t count, const float* x, int64_t n, float* y,
                                            int64_t yStride) {
  transposedTimesInputsIn<8>(wt, stride, cols, count, x, n, y, yStride);
}
void transposedTimesInputs4(const float* wt, int64_t stride, int64_t cols, int64_t count,
                            const float* x, int64_t n, float* y, int64_t yStride) {
  transposedTimesInputsIn<4>(wt, stride, cols, count, x, n, y, yStride);
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
  atWidth(rowTimesInputs16, rowTimesInputs8, rowTimesInputs4, wr, x, n, cols, rows, yr);
}

void bf16RowTimesInputs(const uint16_t* wr, const float* x, int64_t n, int64_t cols, int64_t rows,
                        float* yr) {
  atWidth(bf16RowTimesInputs16, bf16RowTimesInputs8, bf16RowTimesInputs4, wr, x, n, cols, rows, yr);
}

void addScaledRows(const float* const* rows, int64_t count, const float* scales,
                   int64_t scaleStride, int64_t n, int64_t cols, float* out) {
  atWidth(addScaledRows16, addScaledRows8, addScaledRows4, rows, count, scales, scaleStride, n,
          cols, out);
}

void transposedTimesInputs(const float* wt, int64_t stride, int64_t cols, int64_t count,
                           const float* x, int64_t n, float* y, int64_t yStride) {
  atWidth(transposedTimesInputs16, transposedTimesInputs8, transposedTimesInputs4, wt, stride, cols,
          count, x, n, y, yStride);
}

}  // namespace strata::kernels
