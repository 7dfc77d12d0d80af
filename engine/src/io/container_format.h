#pragma once
// The Strata container's on-disk vocabulary, shared by its writer (the converter) and its
// reader (io/container.h): file names, the per-tensor quant description, the layout rule that
// places every stored tensor, and the safetensors header that records it. docs/container-format.md
// is the prose version of this file.
//
// A container directory holds `resident.safetensors` (every tensor but the routed experts),
// one `experts-LLL.safetensors` per MoE layer (experts in order, each starting on a 4096-byte
// boundary with its gate, up and down data and scales adjacent), config.json and tokenizer
// files copied from the source, and `strata-container.json`, written last: its presence
// means the conversion finished.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/safetensors.h"

namespace strata::io {

inline constexpr const char* kContainerFormat = "strata-container";
// Version 2: int4 scales are bf16 (version 1 stored f32; such containers must be converted
// again, the reader says so).
inline constexpr int kContainerVersion = 2;
inline constexpr const char* kManifestName = "strata-container.json";
inline constexpr const char* kResidentFileName = "resident.safetensors";
inline constexpr uint64_t kExpertAlignment = 4096;  // O_DIRECT-friendly expert starts
inline constexpr uint64_t kResidentAlignment = 8;   // data section start of the resident file

std::string expertFileName(int layer);  // "experts-003.safetensors"

// How one tensor is stored. Int8/Int4 follow quant/int_quant.h (codes + one scale per group of
// columns: f32 for int8, bf16 for int4); F32/BF16 hold the values themselves.
enum class QuantFormat { F32, BF16, Int8, Int4 };
std::string_view quantFormatName(QuantFormat format);  // "f32", "bf16", "int8", "int4"
std::optional<QuantFormat> parseQuantFormat(std::string_view name);
inline bool isInteger(QuantFormat f) { return f == QuantFormat::Int8 || f == QuantFormat::Int4; }

// XXH3-64 as 16 lowercase hex digits (fixed width: a header's length never depends on it).
std::string hex64(uint64_t value);
std::optional<uint64_t> parseHex64(std::string_view text);

// One logical tensor (a Hugging Face name) as stored. Integer formats store their codes under
// the tensor's name (I8 [rows, paddedCols] or U8 [rows, paddedCols / 2]) and their scales under
// `<name>.scales` (F32 or, for int4, BF16 [rows, paddedCols / groupSize]). F32/BF16 store the
// logical shape.
struct TensorEntry {
  std::string name;
  QuantFormat format = QuantFormat::F32;
  std::vector<int64_t> shape;   // logical shape
  int64_t groupSize = 0;        // integer formats: columns per scale (paddedCols = per row)
  int64_t paddedCols = 0;       // integer formats
  uint64_t dataChecksum = 0;    // XXH3-64 of the stored codes / values
  uint64_t scalesChecksum = 0;  // XXH3-64 of the stored scales (integer formats)
  // Filled by layoutFile: byte offsets relative to the file's data section.
  uint64_t dataOffset = 0;
  uint64_t scalesOffset = 0;

  // The stored matrix view: 2-D [rows, cols]; 1-D [1, n]; 0-D [1, 1]; N-D [shape0, rest].
  int64_t rows() const;
  int64_t cols() const;
  DType dataDType() const;
  std::vector<int64_t> dataShape() const;
  uint64_t dataBytes() const;
  std::vector<int64_t> scalesShape() const;
  uint64_t scalesBytes() const;  // 0 for F32/BF16
  DType scalesDType() const;     // F32 (int8) or BF16 (int4)
  std::string scalesName() const { return name + ".scales"; }

  // A tensor stored in `format`; requestedGroup 0 means one scale per row (integer formats).
  static TensorEntry make(std::string name, std::vector<int64_t> shape, QuantFormat format,
                          int64_t requestedGroup);
};

// One routed expert in an experts file: its gate, up and down tensors, in that order, each
// codes then scales, occupy [dataOffset, dataOffset + bytes); `span` rounds that up to the
// alignment (zero padding follows), so one read of `span` bytes fetches the expert.
struct ExpertEntry {
  int expert = 0;
  std::array<int, 3> tensors{};  // indices into ContainerFile::tensors: gate, up, down
  uint64_t dataOffset = 0;       // relative to the data section
  uint64_t bytes = 0;
  uint64_t span = 0;
  uint64_t checksum = 0;  // XXH3-64 of the `bytes` bytes
};

enum class FileRole { Resident, Experts };

struct ContainerFile {
  std::string name;
  FileRole role = FileRole::Resident;
  int layer = -1;  // experts files
  std::vector<TensorEntry> tensors;
  std::vector<ExpertEntry> experts;  // experts files, by expert index
  // Filled by layoutFile.
  uint64_t headerBytes = 0;  // 8-byte length + header text: where the data section starts
  uint64_t fileBytes = 0;
};

// What every file of one container records about its origin.
struct ContainerIdentity {
  std::string sourceFingerprint;  // "xxh3-128:<32 hex>"
  std::string policy;             // JSON text of the converter settings
  std::string converter;          // "strata-convert <version>"
};

// One stored safetensors tensor, as layoutFile places it.
struct StoredTensor {
  std::string name;
  DType dtype = DType::U8;
  std::vector<int64_t> shape;
  uint64_t offset = 0;  // relative to the data section
  uint64_t bytes = 0;
};

// Places every stored tensor (and expert padding) of `file`, deterministically from its tensor
// and expert lists, and sizes its header; returns the stored tensors in file order.
std::vector<StoredTensor> layoutFile(ContainerFile& file, const ContainerIdentity& identity);

// The file's first headerBytes bytes: 8-byte length, the JSON header (safetensors entries and
// "__metadata__"), padded with spaces to the file's alignment. Its length does not depend on
// the checksums, so it can be sized before they are known.
std::string buildHeader(const ContainerFile& file, const ContainerIdentity& identity);

// strata-container.json: the container's table of contents, written last (its presence marks a
// finished conversion). It repeats the identity and lists every file with its size and the
// XXH3-64 of its header text, so a truncated or swapped file is caught at open.
struct ContainerManifest {
  ContainerIdentity identity;
  struct File {
    std::string name;
    FileRole role = FileRole::Resident;
    int layer = -1;
    uint64_t bytes = 0;
    uint64_t headerChecksum = 0;  // XXH3-64 of the header text (after the 8-byte length)
  };
  std::vector<File> files;
  std::vector<std::string> copiedFiles;  // config.json, tokenizer files
};
std::string formatManifest(const ContainerManifest& manifest);
ContainerManifest parseManifest(const std::string& text, const std::string& where);

// Why a container of format `version` cannot be read (and, for an older one, what to do).
std::string unsupportedVersionText(const std::string& version);

// Reads the container fields of one file's "__metadata__"; `where` names the file in errors.
// The result has its tensor and expert lists but no layout (call layoutFile).
ContainerFile parseFileMetadata(const std::map<std::string, std::string>& metadata,
                                const std::string& fileName, const std::string& where,
                                ContainerIdentity* identity);

}  // namespace strata::io
