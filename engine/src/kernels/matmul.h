#pragma once
// Dense products against weight matrices. OpenMP-parallel over output rows; callers must not
// be inside a parallel region.
#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "kernels/int_dot.h"
#include "kernels/matrix.h"
#include "kernels/row_product.h"

namespace strata::kernels {

// Below this many multiply-adds a parallel region costs more than it saves (and on a busy
// machine OpenMP barriers can cost milliseconds), so such work runs on the calling thread.
// 65,536 multiply-adds take ~10-40 us on one core, several barriers' worth, so the router
// gate, small projections and a small model's whole step run split (1 << 20 before
// 2026-12-06: the tiny model's eval-tasks ran ~20 % longer; README, Kernels).
inline constexpr int64_t kParallelThreshold = int64_t{1} << 16;

// How quantized weights are multiplied. The default is the exact path: float activations
// against weights dequantized on the fly. With integerActivations, activations are quantized
// to int8 per 32 values and the integer kernels of `intKernels` run (fast path).
struct KernelConfig {
  bool integerActivations = false;
  IntKernels intKernels{IntKernelPath::Scalar, dotInt8Scalar, dotInt4Scalar};
};

// y[n x W.rows] = x[n x W.cols] . W^T
void matmul(const Matrix& w, const float* x, int64_t n, float* y, const KernelConfig& config = {});

// y_i = x . W_i^T for several matrices with the same input, in one parallel region: decode runs
// hundreds of small products per token, and each fork/join wakes the other threads (a syscall
// on a virtualized machine). Each y_i is exactly what matmul() gives.
struct MatmulOutput {
  const Matrix& w;
  float* y;
};
void matmulMany(std::initializer_list<MatmulOutput> outputs, const float* x, int64_t n,
                const KernelConfig& config = {});

// Output rows begin .. end - 1.
struct RowRange {
  int64_t begin, end;
};
// matmul() for the listed output rows only (y's other entries are left as they are), the rows
// split evenly across threads whatever ranges hold them: a draft's logits over its draft
// vocabulary (spec/draft_vocabulary.h). Each computed entry is exactly what matmul() gives.
void matmulRows(const Matrix& w, const float* x, int64_t n, std::span<const RowRange> rows,
                float* y, const KernelConfig& config = {});

// The rows of every product, split across threads in one parallel region when their work
// reaches kParallelThreshold.
void computeRows(std::span<const RowProduct> products);

// A run of output rows of one product (by index into the caller's list): what a thread takes
// at a time.
struct RowChunk {
  size_t product;
  int64_t begin, end;
};
// The rows of products with these row counts in about kChunksPerThread runs per thread, each a
// whole number of tiles (kIntTileRows) but the last of a product, and each at least
// kMinChunkMultiplyAdds of work (`rowWork` multiply-adds a row): a small model's products
// ran ~5 % slower in runs of a few rows each. Threads take runs as they come free rather than
// a fixed half each: on a shared machine one thread often runs slower than the other, and an
// even split left the faster one spinning at every barrier.
inline constexpr int kChunksPerThread = 8;
inline constexpr int64_t kMinChunkMultiplyAdds = int64_t{1} << 16;
std::vector<RowChunk> rowChunks(std::span<const int64_t> rowCounts, int threads, int64_t rowWork);
// The same for the rows of `products`, which share their input (a row of each is the same work).
std::vector<RowChunk> rowChunks(std::span<const RowProduct> products, int threads);
// computeRows from inside a parallel region, called by every thread of it: the chunks of
// `products` (from rowChunks) taken by whichever thread is free, with no barrier at the end
// (the caller places one). `scratch` is the calling thread's own.
void shareRows(std::span<const RowProduct> products, std::span<const RowChunk> chunks,
               std::vector<float>& scratch);

// yr[i * rows] = wr . x[i] for the n activation rows x[i] (cols values each): one weight row,
// loaded once, against every input. Summed in one fixed order (float_rows.cpp: 32 partial sums,
// then pairwise), so a result is the same bits in a batch or alone and with every vector width
// (AVX-512, AVX2, SSE2, NEON; the widest the CPU has is used).
void rowTimesInputs(const float* wr, const float* x, int64_t n, int64_t cols, int64_t rows, float* yr);
// The same for `count` consecutive weight rows (row r at w + r * cols, its outputs at
// y[i * rows + r]), each row's results the same bits as rowTimesInputs gives: the last steps of
// several dots share their shuffles (short rows spend as long there as multiplying).
void rowsTimesInputs(const float* w, int64_t count, const float* x, int64_t n, int64_t cols,
                     int64_t rows, float* y);
// The same for rows anywhere in memory, row r at rows[r] (a query's selected cached keys), its
// outputs at y[i * outStride + r]: one call for all of them, their dots finished four at a
// time, where a call per row spent about as long entering and folding as multiplying.
void gatheredRowsTimesInputs(const float* const* rows, int64_t count, const float* x, int64_t n,
                             int64_t cols, int64_t outStride, float* y);
// The same with bf16 weight rows, widened in registers: bit-identical to rowsTimesInputs on
// the widened rows, reading half the bytes. With 16 or 8 lanes they widen fastest "paired"
// (even and odd columns apart, float_rows.cpp), which needs the inputs rearranged to match:
// xPaired = bf16PairedInputs(x, n, cols), made once per product, or null (the same bits,
// slower).
void bf16RowsTimesInputs(const uint16_t* w, int64_t count, const float* x, int64_t n, int64_t cols,
                         int64_t rows, float* y, const float* xPaired = nullptr);
// The inputs rearranged for bf16RowsTimesInputs' paired rows on this CPU; empty where it has
// no use for them (four lanes, rows under 32 columns).
std::vector<float> bf16PairedInputs(const float* x, int64_t n, int64_t cols);
// The same with `count` rows of an int8 matrix from `first` (cols = w.cols), each code times
// its group's scale in registers: bit-identical to rowsTimesInputs on dequantizeRow's rows,
// reading a quarter of their bytes and writing none (absorbed attention's W_UV from an int8
// kv_b, which was widened to f32 for every use).
void int8RowsTimesInputs(const quant::QuantizedMatrix& w, int64_t first, int64_t count,
                         const float* x, int64_t n, int64_t rows, float* y);

// out[i * cols + j] += scales[i * scaleStride] * row[j] for the n outputs i: one row, loaded
// once, added into several accumulators (attention's weighted sums of cached latents).
// Multi-versioned like rowTimesInputs.
void addScaledRow(const float* row, const float* scales, int64_t scaleStride, int64_t n,
                  int64_t cols, float* out);

// The same for `count` rows in order: out[i * outStride + j] += scales[i * scaleStride + r] *
// rows[r][j] for r = 0 .. count - 1, each output's sums in addScaledRow's order, but with a
// block of the outputs held in registers across all the rows rather than loaded and stored per
// row, and along the vectors, so no horizontal sums (attention's weighted sum over thousands
// of cached latents; prefill's logits over a head's transposed keys, from zeroed outputs).
// Per vector width likewise.
void addScaledRows(const float* const* rows, int64_t count, const float* scales,
                   int64_t scaleStride, int64_t n, int64_t cols, float* out, int64_t outStride);
// The same with `count` rows of an int8 matrix from `first` (cols = w.cols), widened in
// registers: bit-identical to addScaledRows on dequantizeRow's rows (absorbed attention's
// W_UK^T q from an int8 kv_b).
void int8AddScaledRows(const quant::QuantizedMatrix& w, int64_t first, int64_t count,
                       const float* scales, int64_t scaleStride, int64_t n, float* out,
                       int64_t outStride);

// Dot product of two f32 vectors.
inline float dot(const float* a, const float* b, int64_t len) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < len; ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace strata::kernels
