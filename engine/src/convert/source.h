#pragma once
// The converter's view of a Hugging Face checkpoint: config.json, the shard index and every
// shard header, validated before a byte is written (FP8 weights paired with well-shaped
// scales, no scales on non-FP8 weights, modules_to_not_convert consistent with the dtypes,
// shards present). The table of tensors is saved in the output's work directory, so a
// resumed conversion still knows the shards --delete-input has already removed.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "model/config.h"

namespace strata::convert {

struct SourceTensor {
  std::string name;
  io::DType dtype = io::DType::F32;
  std::vector<int64_t> shape;
  int shard = 0;   // index into SourceTable::shards
  int scale = -1;  // FP8 weights: index of `<name>_scale_inv` in SourceTable::tensors
  uint64_t bytes = 0;
};

struct SourceShard {
  std::string name;  // file name inside the checkpoint directory
  uint64_t fileBytes = 0;
  uint64_t headerChecksum = 0;  // XXH3-64 of its header text
};

struct SourceTable {
  std::string configText;
  std::string indexText;              // empty for a single model.safetensors
  std::vector<SourceShard> shards;    // sorted by name
  std::vector<SourceTensor> tensors;  // sorted by name; scales included

  // "xxh3-128:<32 hex>" over config.json, the index, and each shard's name, size and header
  // checksum: identifies the source without reading its data.
  std::string fingerprint() const;
  std::string toJson() const;
  static SourceTable fromJson(const std::string& text, const std::string& where);
};

// quantization_config.modules_to_not_convert with the GLM-5 misnaming repaired: the FP8
// checkpoints list `self_attn.indexers_proj`, a module that does not exist; the unquantized
// tensor is `self_attn.indexer.weights_proj` (spec §2.4).
std::vector<std::string> modulesNotConverted(const std::string& configText);

class SourceCheckpoint {
 public:
  // Opens and validates `dir`. With `saved` (resuming), shards may be absent (deleted by an
  // earlier --delete-input run); present ones and config.json must match the saved table.
  static SourceCheckpoint open(const std::filesystem::path& dir,
                               const SourceTable* saved = nullptr);

  const std::filesystem::path& directory() const { return dir_; }
  const SourceTable& table() const { return table_; }
  const model::ModelConfig& config() const { return config_; }
  bool shardPresent(int shard) const { return stores_.at(static_cast<size_t>(shard)).has_value(); }
  // Closes a shard (before --delete-input removes it: an open file keeps its disk space).
  void releaseShard(int shard) { stores_.at(static_cast<size_t>(shard)).reset(); }
  io::Fp8BlockSize fp8Block() const { return {config_.fp8BlockRows, config_.fp8BlockCols}; }

  // Bytes [begin, begin + out.size()) of a tensor's data.
  void readRaw(const SourceTensor& tensor, uint64_t begin, std::span<std::byte> out) const;
  // An FP8 weight's block scales [ceil(rows/br) x ceil(cols/bc)].
  std::vector<float> readScales(const SourceTensor& weight) const;

 private:
  std::filesystem::path dir_;
  SourceTable table_;
  model::ModelConfig config_;
  std::vector<std::optional<io::TensorStore>> stores_;  // by shard; empty when absent
};

// Raw source rows [row0, row0 + rows) of `tensor` (cols = product of the other dims) to f32.
// FP8 rows must start on a block row; `scales` are the weight's block scales.
void sourceRowsToF32(const SourceTensor& tensor, const std::byte* raw, int64_t row0, int64_t rows,
                     int64_t cols, const float* scales, io::Fp8BlockSize block, float* out);

}  // namespace strata::convert
