#include "model/weight_source.h"

#include "core/files.h"
#include "core/text.h"
#include "io/container.h"
#include "io/safetensors.h"
#include "strata/error.h"

namespace strata::model {
namespace {

using kernels::Matrix;

class CheckpointSource final : public WeightSource {
 public:
  CheckpointSource(const io::TensorStore& store, io::Fp8BlockSize block)
      : store_(store), block_(block) {}

  Matrix matrix(const std::string& name, int64_t rows, int64_t cols,
                WeightPrecision precision) const override {
    const int64_t shape[] = {rows, cols};
    std::vector<float> values = store_.readF32(name, shape, block_);
    if (precision == WeightPrecision::Native && store_.get(name).dtype == io::DType::BF16)
      return Matrix::toBf16(rows, cols, values);
    return Matrix::fromF32(rows, cols, std::move(values));
  }

  EmbeddingTable embedding(const std::string& name, int64_t rows, int64_t cols,
                           WeightPrecision precision) const override {
    return EmbeddingTable(matrix(name, rows, cols, precision));
  }

  Matrix f32Matrix(const std::string& name, int64_t rows, int64_t cols) const override {
    const int64_t shape[] = {rows, cols};
    return Matrix::fromF32(rows, cols, store_.readF32(name, shape, block_));
  }

  std::vector<float> vector(const std::string& name, int64_t size) const override {
    const int64_t shape[] = {size};
    return store_.readF32(name, shape);
  }

  bool contains(const std::string& name) const override { return store_.contains(name); }

 private:
  const io::TensorStore& store_;
  io::Fp8BlockSize block_;
};

class ContainerSource final : public WeightSource {
 public:
  explicit ContainerSource(const io::Container& container) : container_(container) {}

  Matrix matrix(const std::string& name, int64_t rows, int64_t cols,
                WeightPrecision precision) const override {
    const io::ContainerTensor& t = checked(name, {rows, cols});
    switch (t.entry.format) {
      case io::QuantFormat::Int8:
      case io::QuantFormat::Int4:
        return Matrix::fromQuantized(container_.readQuantized(name));
      case io::QuantFormat::BF16:
        if (precision == WeightPrecision::Native)
          return Matrix::toBf16(rows, cols, container_.readF32(name));
        break;
      case io::QuantFormat::F32:
        break;
    }
    return Matrix::fromF32(rows, cols, container_.readF32(name));
  }

  EmbeddingTable embedding(const std::string& name, int64_t rows, int64_t cols,
                           WeightPrecision) const override {
    checked(name, {rows, cols});
    return EmbeddingTable(container_.tensorRows(name));
  }

  Matrix f32Matrix(const std::string& name, int64_t rows, int64_t cols) const override {
    checked(name, {rows, cols});
    return Matrix::fromF32(rows, cols, container_.readF32(name));
  }

  std::vector<float> vector(const std::string& name, int64_t size) const override {
    checked(name, {size});
    return container_.readF32(name);
  }

  bool contains(const std::string& name) const override { return container_.find(name) != nullptr; }

 private:
  const io::ContainerTensor& checked(const std::string& name,
                                     const std::vector<int64_t>& shape) const {
    const io::ContainerTensor& t = container_.get(name);
    if (t.entry.shape != shape)
      throw Error(container_.files()[static_cast<size_t>(t.fileIndex)].string() + ": tensor '" +
                  name + "' has shape " + shapeString(t.entry.shape) + ", expected " +
                  shapeString(shape));
    return t;
  }

  const io::Container& container_;
};

}  // namespace

std::unique_ptr<WeightSource> containerWeightSource(const io::Container& container) {
  return std::make_unique<ContainerSource>(container);
}

std::unique_ptr<WeightSource> checkpointWeightSource(const io::TensorStore& store,
                                                     const ModelConfig& config) {
  return std::make_unique<CheckpointSource>(store,
                                            io::Fp8BlockSize{config.fp8BlockRows, config.fp8BlockCols});
}

}  // namespace strata::model
