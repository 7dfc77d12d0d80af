#pragma once
// One kind of cached vector (the latent, the rope key or the indexer key) for every token of a
// layer: `width` values per row, held in the cache's precision. F32 rows are floats; BF16 and F16
// rows are 16-bit words, so a 16-bit cache takes half the memory. Values are rounded to the
// precision (nearest even) as they are appended, and widening them back is exact, so attention
// computes the same numbers whether it reads a row in place (f32) or widened (16-bit).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "strata/kv_precision.h"

namespace strata::kv {

class KvRows {
 public:
  KvRows() = default;
  KvRows(int width, KvPrecision precision) : width_(width), precision_(precision) {}

  int width() const { return width_; }
  KvPrecision precision() const { return precision_; }
  size_t valueCount() const { return precision_ == KvPrecision::F32 ? f32_.size() : half_.size(); }
  int64_t rows() const { return width_ ? static_cast<int64_t>(valueCount()) / width_ : 0; }
  bool empty() const { return valueCount() == 0; }
  int64_t bytes() const {
    return static_cast<int64_t>(f32_.size() * sizeof(float) + half_.size() * sizeof(uint16_t));
  }
  // Bytes per stored value: 4 (f32) or 2.
  size_t valueBytes() const { return precision_ == KvPrecision::F32 ? 4 : 2; }

  // Appends `count` values (whole rows), rounding them to the precision.
  void append(const float* values, size_t count);
  // Appends `count` values already encoded in this precision (a KV file's payload).
  void appendEncoded(const uint8_t* bytes, size_t count);
  void reserveValues(size_t count);  // big ones on transparent huge pages
  void truncateRows(int64_t rows);
  // This object's first `rows` rows, in the same precision.
  KvRows prefix(int64_t rows) const;
  // The same values re-encoded in `precision` (widening is exact; narrowing rounds).
  KvRows convertedTo(KvPrecision precision) const;

  // Row r as f32: the stored floats, or the row widened into `scratch` (width floats).
  const float* row(int64_t r, float* scratch) const;
  // Rows [first, first + count) as f32: the stored floats, or widened into `scratch`.
  const float* rowsF32(int64_t first, int64_t count, std::vector<float>& scratch) const;
  // Values [first, first + count) encoded in `precision` (this one's: a copy) into `out`.
  void encode(size_t first, size_t count, KvPrecision precision, uint8_t* out) const;
  // Every value as f32 (tests, diagnostics).
  std::vector<float> toF32() const;

  bool operator==(const KvRows&) const = default;

 private:
  void widen(size_t first, size_t count, float* out) const;

  int width_ = 0;
  KvPrecision precision_ = KvPrecision::F32;
  std::vector<float> f32_;      // F32
  std::vector<uint16_t> half_;  // BF16 or F16 bit patterns
};

}  // namespace strata::kv
