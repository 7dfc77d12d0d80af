#pragma once
// Where the model's weights are read from: a Hugging Face checkpoint (safetensors, FP8/BF16/F32,
// through io::TensorStore) or a Strata container (io::Container: int8/int4/bf16/f32 as the
// converter stored them, checksums verified as they load). The weight binding in
// model/weights.cpp asks for tensors by name and shape and never sees which one it is.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "kernels/matrix.h"
#include "model/config.h"
#include "model/embedding_table.h"

namespace strata::io {
class Container;
class TensorStore;
}  // namespace strata::io

namespace strata::model {

// How weights are held in memory. F32: everything widened (the exact path). Native: tensors
// stored as BF16 stay 16-bit and are widened inside the kernels (same values, half the RAM).
// Quantized (container) weights stay quantized either way.
enum class WeightPrecision { F32, Native };

class WeightSource {
 public:
  virtual ~WeightSource() = default;
  // A weight [rows x cols] in the format it is stored in (see WeightPrecision).
  virtual kernels::Matrix matrix(const std::string& name, int64_t rows, int64_t cols,
                                 WeightPrecision precision) const = 0;
  // The token embedding table: on disk for a container, in memory (as matrix()) otherwise.
  virtual EmbeddingTable embedding(const std::string& name, int64_t rows, int64_t cols,
                                   WeightPrecision precision) const = 0;
  // A weight widened to f32 whatever its storage (the indexer's weights_proj).
  virtual kernels::Matrix f32Matrix(const std::string& name, int64_t rows, int64_t cols) const = 0;
  virtual std::vector<float> vector(const std::string& name, int64_t size) const = 0;
  virtual bool contains(const std::string& name) const = 0;
};

// Reads from an opened container or checkpoint, which must outlive the source (the engine
// opens the model's files once and plans, fingerprints and loads from the same object).
std::unique_ptr<WeightSource> containerWeightSource(const io::Container& container);
std::unique_ptr<WeightSource> checkpointWeightSource(const io::TensorStore& store,
                                                     const ModelConfig& config);

}  // namespace strata::model
