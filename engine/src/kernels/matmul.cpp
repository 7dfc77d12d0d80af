#include "kernels/matmul.h"

#include <omp.h>

#include <cstring>
#include <vector>

#include "quant/convert.h"

namespace strata::kernels {

Matrix Matrix::fromF32(int64_t rows, int64_t cols, std::vector<float> values) {
  Matrix m;
  m.rows_ = rows;
  m.cols_ = cols;
  m.format_ = WeightFormat::F32;
  m.f32_ = std::move(values);
  return m;
}

Matrix Matrix::toBf16(int64_t rows, int64_t cols, const std::vector<float>& values) {
  Matrix m;
  m.rows_ = rows;
  m.cols_ = cols;
  m.format_ = WeightFormat::BF16;
  m.bf16_.resize(values.size());
  for (size_t i = 0; i < values.size(); ++i) m.bf16_[i] = quant::f32ToBf16(values[i]);
  return m;
}

Matrix Matrix::fromQuantized(quant::QuantizedMatrix quantized) {
  Matrix m;
  m.rows_ = quantized.rows;
  m.cols_ = quantized.cols;
  m.format_ = quantized.format == quant::IntFormat::Int8 ? WeightFormat::Int8 : WeightFormat::Int4;
  m.quantized_ = std::move(quantized);
  return m;
}

int64_t Matrix::bytes() const {
  return static_cast<int64_t>(f32_.size() * sizeof(float) + bf16_.size() * sizeof(uint16_t)) +
         quantized_.bytes();
}

void Matrix::row(int64_t r, float* out) const {
  switch (format_) {
    case WeightFormat::F32:
      std::memcpy(out, f32_.data() + r * cols_, sizeof(float) * cols_);
      return;
    case WeightFormat::BF16:
      for (int64_t c = 0; c < cols_; ++c) out[c] = quant::bf16ToF32(bf16_[r * cols_ + c]);
      return;
    case WeightFormat::Int8:
    case WeightFormat::Int4:
      quant::dequantizeRow(quantized_, r, out);
      return;
  }
}

// A dot product as 32 partial sums (two 16-lane vectors over alternating chunks of 16, so two
// FMA chains hide each other's latency), then a pairwise sum; a tail under 16 goes into the
// first vector's lanes. The order depends only on `cols`, never on how many inputs are
// computed together, so a row's result is bit-identical in a batch and alone (speculative
// verification relies on that). GCC vector extensions: one zmm, two ymm or four xmm registers.
// The body is one always-inlined template, over the weights' type (f32, or bf16 widened in
// registers: exact, so a bf16 row gives what its widened f32 row gives), expanded inside each
// multi-versioned entry point below (a function it called would not be compiled for their
// target clones).
typedef float Lanes __attribute__((vector_size(64)));
typedef uint16_t Halves __attribute__((vector_size(32)));
typedef uint32_t Words __attribute__((vector_size(64)));
#define STRATA_LOAD(p) ({ Lanes v_; std::memcpy(&v_, (p), sizeof v_); v_; })
#define STRATA_LOAD_TAIL(p, count) \
  ({ Lanes v_ = {}; for (int64_t l_ = 0; l_ < (count); ++l_) v_[l_] = (p)[l_]; v_; })
// bf16 is the top half of a binary32: widening is a shift.
#define STRATA_LOAD_BF16(p)                                              \
  ({ Halves h_; std::memcpy(&h_, (p), sizeof h_);                         \
     const Words w_ = __builtin_convertvector(h_, Words) << 16;           \
     Lanes v_; std::memcpy(&v_, &w_, sizeof v_); v_; })
#define STRATA_LOAD_TAIL_BF16(p, count)                                                    \
  ({ Words w_ = {}; for (int64_t l_ = 0; l_ < (count); ++l_) w_[l_] = uint32_t{(p)[l_]} << 16; \
     Lanes v_; std::memcpy(&v_, &w_, sizeof v_); v_; })
typedef float Lanes8 __attribute__((vector_size(32)));
typedef float Lanes4 __attribute__((vector_size(16)));
// s[l] += s[l + 8], then + 4, + 2, + 1: in registers, the same order on every target.
#define STRATA_HORIZONTAL_SUM(v)                                                           \
  ({ const Lanes8 h8_ = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +             \
                        __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);         \
     const Lanes4 h4_ = __builtin_shufflevector(h8_, h8_, 0, 1, 2, 3) +                     \
                        __builtin_shufflevector(h8_, h8_, 4, 5, 6, 7);                      \
     const float h0_ = h4_[0] + h4_[2], h1_ = h4_[1] + h4_[3];                              \
     h0_ + h1_; })

// Sixteen weights of type W from p as f32 lanes (the first `count` of them for the tail).
// Macros, like the loads above: a function returning a 64-byte vector changes the ABI per target.
#define STRATA_LOAD_WEIGHTS(W, p)                       \
  ({ Lanes l_;                                          \
     if constexpr (sizeof(W) == 2) {                    \
       l_ = STRATA_LOAD_BF16(p);                        \
     } else {                                           \
       l_ = STRATA_LOAD(p);                             \
     }                                                  \
     l_; })
#define STRATA_LOAD_WEIGHTS_TAIL(W, p, count)           \
  ({ Lanes l_;                                          \
     if constexpr (sizeof(W) == 2) {                    \
       l_ = STRATA_LOAD_TAIL_BF16(p, count);            \
     } else {                                           \
       l_ = STRATA_LOAD_TAIL(p, count);                 \
     }                                                  \
     l_; })

// The horizontal sums of four vectors at once, transposed: each step adds the same lanes
// STRATA_HORIZONTAL_SUM adds, for four vectors in one instruction, so each result is
// bit-identical to that vector's own sum.
#define STRATA_HORIZONTAL_SUMS4(s0, s1, s2, s3, out)                                           \
  do {                                                                                         \
    const Lanes t01_ = __builtin_shufflevector(s0, s1, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19,  \
                                               20, 21, 22, 23) +                               \
                       __builtin_shufflevector(s0, s1, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25,   \
                                               26, 27, 28, 29, 30, 31);                        \
    const Lanes t23_ = __builtin_shufflevector(s2, s3, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19,  \
                                               20, 21, 22, 23) +                               \
                       __builtin_shufflevector(s2, s3, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25,   \
                                               26, 27, 28, 29, 30, 31);                        \
    const Lanes u_ = __builtin_shufflevector(t01_, t23_, 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18,  \
                                             19, 24, 25, 26, 27) +                             \
                     __builtin_shufflevector(t01_, t23_, 4, 5, 6, 7, 12, 13, 14, 15, 20, 21,    \
                                             22, 23, 28, 29, 30, 31);                          \
    const Lanes8 v_ = __builtin_shufflevector(u_, u_, 0, 1, 4, 5, 8, 9, 12, 13) +              \
                      __builtin_shufflevector(u_, u_, 2, 3, 6, 7, 10, 11, 14, 15);             \
    const Lanes4 r_ = __builtin_shufflevector(v_, v_, 0, 2, 4, 6) +                            \
                      __builtin_shufflevector(v_, v_, 1, 3, 5, 7);                             \
    std::memcpy((out), &r_, sizeof r_);                                                        \
  } while (0)

// One weight row against kInputs (1-4) activation rows in one pass over the row: each weight
// vector is loaded once for kInputs FMAs.
template <typename W, int kInputs>
__attribute__((always_inline)) inline void rowTimesSomeInputs(const W* wr, const float* x,
                                                             int64_t cols, int64_t rows,
                                                             float* yr) {
  constexpr int64_t kWidth = 16;
  const int64_t pairs = cols / (2 * kWidth) * (2 * kWidth);
  const bool single = cols - pairs >= kWidth;  // one more full vector after the pairs
  const int64_t tailStart = pairs + (single ? kWidth : 0);
  const int64_t tail = cols - tailStart;
  Lanes a[kInputs] = {}, b[kInputs] = {};
  for (int64_t k = 0; k < pairs; k += 2 * kWidth) {
    const Lanes w0 = STRATA_LOAD_WEIGHTS(W, wr + k), w1 = STRATA_LOAD_WEIGHTS(W, wr + k + kWidth);
#pragma GCC unroll 4
    for (int j = 0; j < kInputs; ++j) {
      a[j] += w0 * STRATA_LOAD(x + j * cols + k);
      b[j] += w1 * STRATA_LOAD(x + j * cols + k + kWidth);
    }
  }
  if (single) {
    const Lanes w0 = STRATA_LOAD_WEIGHTS(W, wr + pairs);
#pragma GCC unroll 4
    for (int j = 0; j < kInputs; ++j) a[j] += w0 * STRATA_LOAD(x + j * cols + pairs);
  }
  if (tail > 0) {
    const Lanes w0 = STRATA_LOAD_WEIGHTS_TAIL(W, wr + tailStart, tail);
#pragma GCC unroll 4
    for (int j = 0; j < kInputs; ++j) a[j] += w0 * STRATA_LOAD_TAIL(x + j * cols + tailStart, tail);
  }
  if constexpr (kInputs == 1) {
    const Lanes s = a[0] + b[0];
    yr[0] = STRATA_HORIZONTAL_SUM(s);
  } else {
    Lanes s[4] = {};  // unused inputs sum zeros
#pragma GCC unroll 4
    for (int j = 0; j < kInputs; ++j) s[j] = a[j] + b[j];
    float sums[4];
    STRATA_HORIZONTAL_SUMS4(s[0], s[1], s[2], s[3], sums);
#pragma GCC unroll 4
    for (int j = 0; j < kInputs; ++j) yr[j * rows] = sums[j];
  }
}

// One weight row against n activation rows: four inputs per pass, then the rest in one pass
// when their values fit in L1 together (a 32 KiB L1 is the common size), else one by one
// (measured with `bench kernels` rows f32/bf16_matmul3: on 6,144-column rows three inputs in one
// pass were ~10 % slower than one at a time; on 2,048-column rows up to 2x faster).
template <typename W>
__attribute__((always_inline)) inline void rowTimesInputsOf(const W* wr, const float* x, int64_t n,
                                                           int64_t cols, int64_t rows, float* yr) {
  constexpr int64_t kL1Floats = 8192;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) rowTimesSomeInputs<W, 4>(wr, x + i * cols, cols, rows, yr + i * rows);
  if ((n - i) * cols > kL1Floats) {
    for (; i < n; ++i) rowTimesSomeInputs<W, 1>(wr, x + i * cols, cols, rows, yr + i * rows);
    return;
  }
  switch (n - i) {
    case 3: rowTimesSomeInputs<W, 3>(wr, x + i * cols, cols, rows, yr + i * rows); break;
    case 2: rowTimesSomeInputs<W, 2>(wr, x + i * cols, cols, rows, yr + i * rows); break;
    case 1: rowTimesSomeInputs<W, 1>(wr, x + i * cols, cols, rows, yr + i * rows); break;
    default: break;
  }
}

// Built for several instruction sets; the loader picks the best for this CPU at start (GCC
// function multi-versioning), so the binary runs on any x86-64 without -march=native.
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void rowTimesInputs(const float* wr, const float* x, int64_t n, int64_t cols, int64_t rows,
                    float* yr) {
  rowTimesInputsOf(wr, x, n, cols, rows, yr);
}

#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void bf16RowTimesInputs(const uint16_t* wr, const float* x, int64_t n, int64_t cols, int64_t rows,
                        float* yr) {
  rowTimesInputsOf(wr, x, n, cols, rows, yr);
}
// addScaledRows for kN outputs: each 32-column block of the outputs stays in registers while
// every row adds into it, in row order; leftover columns one by one, also in row order.
template <int kN>
__attribute__((always_inline)) inline void addScaledRowsOf(const float* const* rows, int64_t count,
                                                          const float* scales, int64_t scaleStride,
                                                          int64_t cols, float* out) {
  constexpr int64_t kWidth = 16, kBlock = 2 * kWidth;
  int64_t j = 0;
  for (; j + kBlock <= cols; j += kBlock) {
    Lanes a[kN], b[kN];
#pragma GCC unroll 4
    for (int i = 0; i < kN; ++i) {
      a[i] = STRATA_LOAD(out + i * cols + j);
      b[i] = STRATA_LOAD(out + i * cols + j + kWidth);
    }
    for (int64_t r = 0; r < count; ++r) {
      const Lanes k0 = STRATA_LOAD(rows[r] + j), k1 = STRATA_LOAD(rows[r] + j + kWidth);
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
      std::memcpy(out + i * cols + j + kWidth, &b[i], sizeof b[i]);
    }
  }
  for (; j < cols; ++j)
    for (int i = 0; i < kN; ++i) {
      float o = out[i * cols + j];
      for (int64_t r = 0; r < count; ++r) o += scales[i * scaleStride + r] * rows[r][j];
      out[i * cols + j] = o;
    }
}

#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void addScaledRows(const float* const* rows, int64_t count, const float* scales,
                   int64_t scaleStride, int64_t n, int64_t cols, float* out) {
  for (int64_t i = 0; i < n; i += 4) {
    const float* s = scales + i * scaleStride;
    float* o = out + i * cols;
    switch (std::min<int64_t>(4, n - i)) {
      case 4: addScaledRowsOf<4>(rows, count, s, scaleStride, cols, o); break;
      case 3: addScaledRowsOf<3>(rows, count, s, scaleStride, cols, o); break;
      case 2: addScaledRowsOf<2>(rows, count, s, scaleStride, cols, o); break;
      default: addScaledRowsOf<1>(rows, count, s, scaleStride, cols, o); break;
    }
  }
}

#undef STRATA_LOAD
#undef STRATA_LOAD_TAIL
#undef STRATA_LOAD_BF16
#undef STRATA_LOAD_TAIL_BF16
#undef STRATA_LOAD_WEIGHTS
#undef STRATA_LOAD_WEIGHTS_TAIL
#undef STRATA_HORIZONTAL_SUM
#undef STRATA_HORIZONTAL_SUMS4

#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void addScaledRow(const float* __restrict row, const float* scales, int64_t scaleStride, int64_t n,
                  int64_t cols, float* __restrict out) {
  for (int64_t i = 0; i < n; ++i) {
    const float s = scales[i * scaleStride];
    float* __restrict o = out + i * cols;
    for (int64_t j = 0; j < cols; ++j) o[j] += s * row[j];
  }
}

void computeRows(std::span<const RowProduct> products) {
  int64_t work = 0;
  for (const RowProduct& p : products) work += p.multiplyAdds();
#pragma omp parallel if (work >= kParallelThreshold)
  {
    std::vector<float> scratch;  // a dequantized weight row, reused for every row of the thread
    shareRows(products, scratch);
  }
}

void shareRows(std::span<const RowProduct> products, std::vector<float>& scratch) {
  for (const RowProduct& p : products) {
#pragma omp for schedule(static) nowait
    for (int64_t r = 0; r < p.rows(); ++r) p.computeRow(r, scratch);
  }
}

void matmul(const Matrix& w, const float* x, int64_t n, float* y, const KernelConfig& config) {
  const RowProduct product(w, x, n, y, config.integerActivations, config.intKernels);
  computeRows({&product, 1});
}

void matmulMany(std::initializer_list<MatmulOutput> outputs, const float* x, int64_t n,
                const KernelConfig& config) {
  std::vector<RowProduct> products;
  products.reserve(outputs.size());
  for (const MatmulOutput& o : outputs) {
    if (products.empty())
      products.emplace_back(o.w, x, n, o.y, config.integerActivations, config.intKernels);
    else
      products.emplace_back(o.w, products.front(), o.y);
  }
  computeRows(products);
}

}  // namespace strata::kernels
