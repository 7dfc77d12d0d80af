#pragma once
// Turns source rows into a container tensor's stored bytes: int8/int4 codes and scales through
// quant::quantizeMatrix (the one copy of that math), or f32/bf16 values. Rows are processed in
// slices of whole FP8 block rows, in parallel with OpenMP; every row is independent, so the
// bytes do not depend on the thread count.
#include <cstddef>
#include <cstdint>

#include "convert/source.h"
#include "io/container_format.h"

namespace strata::convert {

struct EncodeTarget {
  const io::TensorEntry* entry = nullptr;
  std::byte* data = nullptr;    // where row row0's codes / values go
  std::byte* scales = nullptr;  // where row row0's scales go (integer formats)
};

// Encodes rows [row0, row0 + rows) of `source` whose raw bytes start at `raw`. `fp8Scales` are
// the weight's block scales (FP8 sources); threads 0 means OpenMP's default.
void encodeRows(const SourceTensor& source, const std::byte* raw, int64_t row0, int64_t rows,
                const float* fp8Scales, io::Fp8BlockSize block, const EncodeTarget& target,
                int threads);

// Rows per parallel slice for a source tensor: whole FP8 block rows, else 128.
int64_t sliceRows(const SourceTensor& source, io::Fp8BlockSize block);

}  // namespace strata::convert
