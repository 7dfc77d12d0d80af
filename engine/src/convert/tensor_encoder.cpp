#include "convert/tensor_encoder.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <vector>

#include "quant/convert.h"
#include "quant/int_quant.h"
#include "strata/error.h"

namespace strata::convert {
namespace {

// Stores f32 rows [rows x cols] in the entry's format at data / scales.
void encodeSlice(const io::TensorEntry& e, const float* values, int64_t rows, std::byte* data,
                 std::byte* scales) {
  const int64_t cols = e.cols();
  switch (e.format) {
    case io::QuantFormat::F32:
      std::memcpy(data, values, static_cast<size_t>(rows * cols) * sizeof(float));
      return;
    case io::QuantFormat::BF16:
      for (int64_t i = 0; i < rows * cols; ++i) {
        const uint16_t bits = quant::f32ToBf16(values[i]);
        std::memcpy(data + 2 * i, &bits, 2);
      }
      return;
    case io::QuantFormat::Int8:
    case io::QuantFormat::Int4: {
      const auto format =
          e.format == io::QuantFormat::Int8 ? quant::IntFormat::Int8 : quant::IntFormat::Int4;
      const int64_t requested = e.groupSize == e.paddedCols ? 0 : e.groupSize;
      const quant::QuantizedMatrix m = quant::quantizeMatrix(values, rows, cols, format, requested);
      if (m.paddedCols != e.paddedCols || m.groupSize != e.groupSize)
        throw Error("tensor '" + e.name + "': quantized layout differs from the planned one");
      std::memcpy(data, m.codes(), static_cast<size_t>(m.codeBytes()));
      std::memcpy(scales, m.scaleData(), static_cast<size_t>(m.scaleBytes()));
      return;
    }
  }
}

}  // namespace

int64_t sliceRows(const SourceTensor& source, io::Fp8BlockSize block) {
  return source.dtype == io::DType::F8_E4M3 ? block.rows : 128;
}

void encodeRows(const SourceTensor& source, const std::byte* raw, int64_t row0, int64_t rows,
                const float* fp8Scales, io::Fp8BlockSize block, const EncodeTarget& target,
                int threads) {
  const io::TensorEntry& e = *target.entry;
  const int64_t cols = e.cols();
  const int64_t slice = sliceRows(source, block);
  const int64_t slices = (rows + slice - 1) / slice;
  const uint64_t rawRowBytes = static_cast<uint64_t>(cols) * io::dtypeSize(source.dtype);
  const uint64_t dataRowBytes = e.dataBytes() / static_cast<uint64_t>(e.rows());
  const uint64_t scaleRowBytes = e.scalesBytes() / static_cast<uint64_t>(e.rows());
  std::exception_ptr failure;
#pragma omp parallel num_threads(threads > 0 ? threads : omp_get_max_threads()) if (slices > 1)
  {
    std::vector<float> values;
#pragma omp for schedule(dynamic)
    for (int64_t s = 0; s < slices; ++s) {
      try {
        const int64_t first = s * slice;
        const int64_t n = std::min(slice, rows - first);
        values.resize(static_cast<size_t>(n * cols));
        sourceRowsToF32(source, raw + first * rawRowBytes, row0 + first, n, cols, fp8Scales, block,
                        values.data());
        encodeSlice(e, values.data(), n, target.data + first * dataRowBytes,
                    target.scales ? target.scales + first * scaleRowBytes : nullptr);
      } catch (...) {
#pragma omp critical(strata_encode_failure)
        if (!failure) failure = std::current_exception();
      }
    }
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace strata::convert
