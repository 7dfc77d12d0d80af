#pragma once
// Rows of one stored container tensor, read from its file on demand (one pread each for the
// codes and the scales) and decoded to f32 exactly as the tensor loaded whole would decode
// them. For the token embedding table: a step needs one row per token, so the table can stay
// on disk (and in the OS page cache when hot) instead of in RAM.
#include <cstdint>
#include <filesystem>

#include "io/container_format.h"

namespace strata::io {

class TensorRows {
 public:
  // Opens `file` for reading; `dataOffset` and `scalesOffset` are absolute. Throws
  // strata::Error naming the file.
  TensorRows(const std::filesystem::path& file, const TensorEntry& entry, uint64_t dataOffset,
             uint64_t scalesOffset);
  ~TensorRows();
  TensorRows(const TensorRows&) = delete;
  TensorRows& operator=(const TensorRows&) = delete;

  int64_t rows() const { return entry_.rows(); }
  int64_t cols() const { return entry_.cols(); }

  // Writes row r (cols() floats). Thread-safe. Throws strata::Error naming the file and the
  // tensor when the read fails or r is out of range.
  void row(int64_t r, float* out) const;

 private:
  void readAt(void* out, uint64_t bytes, uint64_t offset) const;

  std::filesystem::path file_;
  TensorEntry entry_;
  uint64_t dataOffset_;
  uint64_t scalesOffset_;
  uint64_t dataRowBytes_;
  uint64_t scaleRowBytes_;
  int fd_ = -1;
};

}  // namespace strata::io
