#pragma once
// Reads Hugging Face safetensors checkpoints: a single `model.safetensors` or shards listed by
// `model.safetensors.index.json`. Headers are validated completely at open (dtype, shape,
// offsets inside the file, no overlaps); tensors are found through one name -> tensor hash
// index and read with pread, so nothing is mapped or read until it is asked for.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace strata::io {

// I8 and U8 hold the codes of quantized containers (io/container.h); readF32 rejects them.
enum class DType { F32, BF16, F16, F8_E4M3, I8, U8 };

std::string_view dtypeName(DType dtype);  // "F32", "BF16", "F16", "F8_E4M3", "I8", "U8"
size_t dtypeSize(DType dtype);

struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int fileIndex = 0;    // index into TensorStore::files()
  uint64_t offset = 0;  // absolute byte offset of the data in its file
  uint64_t nbytes = 0;
  int64_t elementCount() const;
};

// Block size of FP8 weight scales (`quantization_config.weight_block_size`), 128x128 in GLM-5.
struct Fp8BlockSize {
  int64_t rows = 128;
  int64_t cols = 128;
};

class TensorStore {
 public:
  // Opens `dir/model.safetensors.index.json` if present, else `dir/model.safetensors`.
  static TensorStore openDirectory(const std::filesystem::path& dir);
  // Opens one safetensors file.
  static TensorStore openFile(const std::filesystem::path& file);

  TensorStore(TensorStore&&) noexcept;
  TensorStore& operator=(TensorStore&&) noexcept;
  ~TensorStore();

  bool contains(std::string_view name) const;
  const TensorInfo* find(std::string_view name) const;  // nullptr if absent
  const TensorInfo& get(std::string_view name) const;   // throws Error naming the tensor
  std::vector<std::string> names() const;               // sorted
  const std::vector<std::filesystem::path>& files() const { return paths_; }

  // Raw bytes of a tensor, read with pread. Throws Error on a short read.
  std::vector<std::byte> readRaw(const TensorInfo& tensor) const;
  // Bytes [begin, begin + out.size()) of a tensor's data; the range must lie inside it.
  void readRawRange(const TensorInfo& tensor, uint64_t begin, std::span<std::byte> out) const;

  // The header's "__metadata__" strings of one file (empty if it has none).
  const std::map<std::string, std::string>& metadata(int fileIndex) const;
  // XXH3-64 of one file's header (the JSON text, padding included): identifies the file's
  // layout without keeping the header in memory.
  uint64_t headerChecksum(int fileIndex) const;
  // Size in bytes of one file as opened.
  uint64_t fileBytes(int fileIndex) const;

  // Reads a weight as f32, checking its shape equals `expectedShape` (error names file,
  // tensor, expected and actual shape). F32/BF16/F16 convert exactly. F8_E4M3 requires the
  // sibling `<name>_scale_inv` (e.g. `x.weight` -> `x.weight_scale_inv`, F32, shape
  // [ceil(rows/block.rows), ceil(cols/block.cols)]) and is dequantized with it; 2-D only.
  std::vector<float> readF32(std::string_view name, std::span<const int64_t> expectedShape,
                             Fp8BlockSize block = {}) const;

 private:
  TensorStore() = default;
  // Opens, validates and indexes one file; returns its index in paths_/fds_.
  int addFile(const std::filesystem::path& path);
  void closeFiles() noexcept;

  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::filesystem::path source_;  // the directory or file opened, for "tensor is missing"
  std::vector<std::filesystem::path> paths_;
  std::vector<int> fds_;
  struct FileHeader {
    std::map<std::string, std::string> metadata;
    uint64_t checksum = 0;
    uint64_t fileBytes = 0;
  };
  std::vector<FileHeader> headers_;
  std::unordered_map<std::string, TensorInfo, StringHash, std::equal_to<>> tensors_;
};

}  // namespace strata::io
