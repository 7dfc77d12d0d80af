#pragma once
// The token embedding table [vocab x hidden]. A step reads one row per token, so a container's
// table stays on disk and each lookup reads its row (from the OS page cache when hot): GLM-5's
// table is 0.95 GB at int8, RAM better spent on the expert cache. A Hugging Face checkpoint's
// table (FP8 blocks, no row access) is held in memory. Rows are the same numbers either way.
#include <cstdint>
#include <memory>

#include "io/tensor_rows.h"
#include "kernels/matrix.h"

namespace strata::model {

class EmbeddingTable {
 public:
  EmbeddingTable() = default;
  explicit EmbeddingTable(kernels::Matrix inMemory) : inMemory_(std::move(inMemory)) {}
  explicit EmbeddingTable(std::shared_ptr<const io::TensorRows> onDisk)
      : onDisk_(std::move(onDisk)) {}

  // Writes token t's row (cols floats). Throws strata::Error when a disk read fails.
  void row(int64_t token, float* out) const {
    if (onDisk_)
      onDisk_->row(token, out);
    else
      inMemory_.row(token, out);
  }
  // Bytes held in memory: none for a table on disk.
  int64_t bytes() const { return onDisk_ ? 0 : inMemory_.bytes(); }
  bool onDisk() const { return onDisk_ != nullptr; }

 private:
  kernels::Matrix inMemory_;
  std::shared_ptr<const io::TensorRows> onDisk_;
};

}  // namespace strata::model
