#pragma once
// Reads a Strata container (io/container_format.h, docs/container-format.md): the quantized
// model the converter writes. Opening validates everything but the tensor bytes: the manifest,
// every file's size and safetensors header, the container metadata, and that the layout the
// metadata implies is exactly the one the header records. Tensor bytes are checked when read:
// a resident tensor against its XXH3-64 on every read, an expert against its own on its first.
//
// Experts are exposed as (file, offset, span): the tier's I/O backends (pread, O_DIRECT,
// io_uring) read that range into a buffer themselves and hand it to decodeExpert.
#include <array>
#include <atomic>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "io/container_format.h"
#include "io/tensor_rows.h"
#include "quant/int_quant.h"

namespace strata::io {

// One logical tensor with its absolute location.
struct ContainerTensor {
  TensorEntry entry;          // name, quant format, group size, logical shape, checksums
  int fileIndex = 0;          // into Container::files()
  uint64_t dataOffset = 0;    // absolute byte offset of the codes / values
  uint64_t scalesOffset = 0;  // absolute byte offset of the scales (integer formats)
  int layer = -1;             // routed experts only
  int expert = -1;

  const std::string& name() const { return entry.name; }
  uint64_t storedBytes() const { return entry.dataBytes() + entry.scalesBytes(); }
};

// Where one routed expert lives: one read of [offset, offset + span) of `file` fetches it.
struct ExpertLocation {
  int layer = 0;
  int expert = 0;
  int fileIndex = 0;
  std::filesystem::path file;
  uint64_t offset = 0;  // absolute, a multiple of kExpertAlignment
  uint64_t bytes = 0;   // gate, up, down codes and scales
  uint64_t span = 0;    // bytes rounded up to kExpertAlignment
  uint64_t checksum = 0;
  std::array<int, 3> tensors{};  // indices into Container::tensors(): gate, up, down
  int slot = 0;                  // dense index of this expert (0 .. expertTotal-1)
};

struct ExpertMatrices {
  quant::QuantizedMatrix gate;
  quant::QuantizedMatrix up;
  quant::QuantizedMatrix down;
};

class Container {
 public:
  // Throws strata::Error naming the file (and tensor) on any problem.
  static Container open(const std::filesystem::path& dir);
  // True when `dir` holds a container manifest (a finished conversion).
  static bool isContainer(const std::filesystem::path& dir);

  Container(Container&&) noexcept;
  Container& operator=(Container&&) noexcept;
  ~Container();

  const std::filesystem::path& directory() const { return dir_; }
  const ContainerManifest& manifest() const { return manifest_; }
  const std::vector<std::filesystem::path>& files() const { return paths_; }

  // Resident tensors in file order, then each experts file's tensors in file order.
  const std::vector<ContainerTensor>& tensors() const { return tensors_; }
  const ContainerTensor* find(std::string_view name) const;  // nullptr if absent
  const ContainerTensor& get(std::string_view name) const;   // throws naming the tensor

  // An int8/int4 tensor, checksums verified.
  quant::QuantizedMatrix readQuantized(std::string_view name) const;
  // Any tensor as f32 (integer formats dequantized), checksums verified.
  std::vector<float> readF32(std::string_view name) const;
  // A resident tensor's rows, read on demand from its file (io/tensor_rows.h); its checksums
  // are verified now, streaming, without holding the tensor. Valid after the container closes.
  std::shared_ptr<const TensorRows> tensorRows(std::string_view name) const;

  // Layers with an experts file, ascending, and the experts of one of them.
  const std::vector<int>& expertLayers() const { return expertLayers_; }
  int expertCount(int layer) const;
  const ExpertLocation& expert(int layer, int expert) const;
  // Reads an expert's span with one pread into `buffer` (at least location.span bytes).
  void readExpertBytes(const ExpertLocation& location, std::span<std::byte> buffer) const;
  // Splits an expert's bytes (as read from location.offset) into its three matrices. The first
  // decode of each expert verifies its checksum; a mismatch names the layer and expert.
  ExpertMatrices decodeExpert(const ExpertLocation& location,
                              std::span<const std::byte> bytes) const;
  // The same matrices as views into `bytes` (no copy: streamed experts are used where they
  // were read); `owner` keeps that memory alive as long as any of them.
  ExpertMatrices viewExpert(const ExpertLocation& location, std::span<const std::byte> bytes,
                            const std::shared_ptr<const void>& owner) const;
  ExpertMatrices readExpert(int layer, int expert) const;

 private:
  void verifyExpert(const ExpertLocation& location, std::span<const std::byte> bytes) const;
  Container() = default;
  void addFile(const ContainerManifest::File& file);
  void readAt(int fileIndex, void* out, uint64_t bytes, uint64_t offset,
              const std::string& what) const;
  std::vector<std::byte> readVerified(const ContainerTensor& t, bool scales) const;
  void verifyStreaming(const ContainerTensor& t, bool scales) const;
  void checkChecksum(const ContainerTensor& t, bool scales, uint64_t actual) const;
  void closeFiles() noexcept;

  std::filesystem::path dir_;
  ContainerManifest manifest_;
  std::vector<std::filesystem::path> paths_;
  std::vector<int> fds_;
  std::vector<ContainerTensor> tensors_;
  std::unordered_map<std::string, size_t> index_;
  std::vector<int> expertLayers_;
  std::unordered_map<int, std::vector<ExpertLocation>> experts_;  // layer -> by expert
  int expertTotal_ = 0;
  std::unique_ptr<std::atomic<bool>[]> verified_;  // by ExpertLocation::slot
};

}  // namespace strata::io
