#include "io/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <unordered_set>
#include <utility>

#include "core/files.h"
#include "core/text.h"
#include "io/pread_all.h"
#include "quant/convert.h"
#include "strata/error.h"

namespace strata::io {

namespace fs = std::filesystem;
using nlohmann::json;

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian and is reinterpreted in place");

std::string_view dtypeName(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return "F32";
    case DType::BF16:
      return "BF16";
    case DType::F16:
      return "F16";
    case DType::F8_E4M3:
      return "F8_E4M3";
    case DType::I8:
      return "I8";
    case DType::U8:
      return "U8";
  }
  return "?";
}

size_t dtypeSize(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return 4;
    case DType::BF16:
      return 2;
    case DType::F16:
      return 2;
    case DType::F8_E4M3:
    case DType::I8:
    case DType::U8:
      return 1;
  }
  return 0;
}

int64_t TensorInfo::elementCount() const {
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  return count;
}

namespace {

// A real header (GLM-5 shards: a few hundred KB) is far below this; a larger length means the
// file is not safetensors, and we should not try to allocate it.
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;
constexpr const char* kIndexFileName = "model.safetensors.index.json";
constexpr const char* kSingleFileName = "model.safetensors";

DType parseDType(const json& value, const std::string& where) {
  if (!value.is_string()) throw Error(where + ": \"dtype\" must be a string, got " + value.dump());
  const auto& name = value.get_ref<const std::string&>();
  if (name == "F32") return DType::F32;
  if (name == "BF16") return DType::BF16;
  if (name == "F16") return DType::F16;
  if (name == "F8_E4M3") return DType::F8_E4M3;
  if (name == "I8") return DType::I8;
  if (name == "U8") return DType::U8;
  throw Error(where + ": dtype " + name +
              " is not supported; expected F32, BF16, F16, F8_E4M3, I8 or U8");
}

std::vector<int64_t> parseShape(const json& value, const std::string& where) {
  if (!value.is_array()) throw Error(where + ": \"shape\" must be an array, got " + value.dump());
  std::vector<int64_t> shape;
  for (const json& dim : value) {
    if (!dim.is_number_integer()) {
      throw Error(where + ": \"shape\" entries must be integers, got " + dim.dump());
    }
    if (!dim.is_number_unsigned() && dim.get<int64_t>() < 0) {
      throw Error(where + ": negative dimension " + dim.dump() + " in shape " + value.dump());
    }
    if (dim.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      throw Error(where + ": dimension " + dim.dump() + " is too large");
    }
    shape.push_back(dim.get<int64_t>());
  }
  return shape;
}

std::pair<uint64_t, uint64_t> parseOffsets(const json& value, const std::string& where) {
  const bool ok = value.is_array() && value.size() == 2 && value[0].is_number_unsigned() &&
                  value[1].is_number_unsigned();
  if (!ok) {
    throw Error(where + ": \"data_offsets\" must be [begin, end] with non-negative integers, got " +
                value.dump());
  }
  const uint64_t begin = value[0].get<uint64_t>();
  const uint64_t end = value[1].get<uint64_t>();
  if (begin > end) {
    throw Error(where + ": \"data_offsets\" " + value.dump() + " has begin > end");
  }
  return {begin, end};
}

// Byte size implied by dtype and shape, or nullopt if it overflows 64 bits.
std::optional<uint64_t> shapeBytes(const std::vector<int64_t>& shape, DType dtype) {
  uint64_t bytes = dtypeSize(dtype);
  for (int64_t dim : shape) {
    if (dim != 0 && bytes > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(dim)) {
      return std::nullopt;
    }
    bytes *= static_cast<uint64_t>(dim);
  }
  return bytes;
}

void checkMetadata(const json& metadata, const std::string& file) {
  if (!metadata.is_object()) {
    throw Error(file + ": \"__metadata__\" must be an object of strings, got " + metadata.dump());
  }
  for (const auto& [key, value] : metadata.items()) {
    if (!value.is_string()) {
      throw Error(file + ": \"__metadata__\" value for '" + key + "' must be a string, got " +
                  value.dump());
    }
  }
}

struct ParsedHeader {
  std::vector<TensorInfo> tensors;
  std::map<std::string, std::string> metadata;
  uint64_t checksum = 0;
};

// Parses and validates one file's header against its size. Offsets in the result are absolute.
ParsedHeader readHeader(int fd, const fs::path& path, uint64_t fileSize, int fileIndex) {
  const std::string file = path.string();
  if (fileSize < 8) {
    throw Error(file + ": file is " + std::to_string(fileSize) +
                " bytes, too short for the 8-byte safetensors header length");
  }
  unsigned char lengthBytes[8];
  preadAll(fd, lengthBytes, 8, 0, path, "the header length");
  uint64_t headerLength = 0;
  for (int i = 7; i >= 0; --i) headerLength = (headerLength << 8) | lengthBytes[i];
  if (headerLength > kMaxHeaderBytes) {
    throw Error(file + ": header length " + std::to_string(headerLength) +
                " is absurdly large (> 100 MB); not a safetensors file?");
  }
  if (8 + headerLength > fileSize) {
    throw Error(file + ": header length " + std::to_string(headerLength) +
                " runs past the end of the file (" + std::to_string(fileSize) + " bytes)");
  }
  std::string text(headerLength, '\0');
  preadAll(fd, text.data(), text.size(), 8, path, "the header");

  // nlohmann keeps the last of duplicate keys silently; a callback sees every top-level key.
  std::unordered_set<std::string> seen;
  auto rejectDuplicates = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::key && depth == 1 &&
        !seen.insert(parsed.get<std::string>()).second) {
      throw Error(file + ": tensor " + inQuotes(parsed.get<std::string>()) +
                  " appears twice in the header");
    }
    return true;
  };
  json header;
  try {
    header = json::parse(text, rejectDuplicates);
  } catch (const json::exception& e) {
    throw Error(file + ": header is not valid JSON: " + e.what());
  }
  if (!header.is_object()) throw Error(file + ": header is not a JSON object");

  const uint64_t dataStart = 8 + headerLength;
  ParsedHeader parsed;
  parsed.checksum = XXH3_64bits(text.data(), text.size());
  std::vector<TensorInfo>& tensors = parsed.tensors;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      checkMetadata(entry, file);
      for (const auto& [key, value] : entry.items()) parsed.metadata[key] = value.get<std::string>();
      continue;
    }
    const std::string where = file + ": tensor " + inQuotes(name);
    if (!entry.is_object()) throw Error(where + ": entry must be an object, got " + entry.dump());
    for (const char* key : {"dtype", "shape", "data_offsets"}) {
      if (!entry.contains(key)) throw Error(where + ": missing \"" + std::string(key) + "\"");
    }
    TensorInfo info;
    info.name = name;
    info.fileIndex = fileIndex;
    info.dtype = parseDType(entry["dtype"], where);
    info.shape = parseShape(entry["shape"], where);
    const auto [begin, end] = parseOffsets(entry["data_offsets"], where);
    const auto expectedBytes = shapeBytes(info.shape, info.dtype);
    if (!expectedBytes || *expectedBytes != end - begin) {
      throw Error(where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                  "] span " + std::to_string(end - begin) + " bytes, but " +
                  std::string(dtypeName(info.dtype)) + " " + shapeString(info.shape) + " needs " +
                  (expectedBytes ? std::to_string(*expectedBytes) : "more than 2^64") + " bytes");
    }
    if (end > fileSize - dataStart) {
      throw Error(where + ": data ends at byte " + std::to_string(dataStart + end) +
                  ", past the end of the file (" + std::to_string(fileSize) +
                  " bytes; file truncated?)");
    }
    info.offset = dataStart + begin;
    info.nbytes = end - begin;
    tensors.push_back(std::move(info));
  }

  // Sorted by offset, two non-empty tensors overlap exactly when one ends after the next begins.
  std::vector<const TensorInfo*> byOffset;
  for (const auto& t : tensors) {
    if (t.nbytes > 0) byOffset.push_back(&t);
  }
  std::sort(byOffset.begin(), byOffset.end(),
            [](const TensorInfo* a, const TensorInfo* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < byOffset.size(); ++i) {
    const TensorInfo& prev = *byOffset[i - 1];
    const TensorInfo& cur = *byOffset[i];
    if (prev.offset + prev.nbytes > cur.offset) {
      throw Error(file + ": tensors " + inQuotes(prev.name) + " and " + inQuotes(cur.name) +
                  " overlap in the data section");
    }
  }
  return parsed;
}

// Shards must sit in the checkpoint directory (or below it): an index naming "../x" or an
// absolute path could make us read files the user never pointed us at.
bool escapesDirectory(const std::string& name) {
  const fs::path path(name);
  if (name.empty() || path.is_absolute() || path.has_root_name()) return true;
  for (const auto& part : path) {
    if (part == "..") return true;
  }
  return false;
}

// std::filesystem::exists without its filesystem_error: the engine throws only strata::Error, and
// an unreadable path fails with a clear message when we open it.
}  // namespace

TensorStore::TensorStore(TensorStore&& other) noexcept
    : source_(std::move(other.source_)),
      paths_(std::move(other.paths_)),
      fds_(std::exchange(other.fds_, {})),
      headers_(std::move(other.headers_)),
      tensors_(std::move(other.tensors_)) {}

TensorStore& TensorStore::operator=(TensorStore&& other) noexcept {
  if (this != &other) {
    closeFiles();
    source_ = std::move(other.source_);
    paths_ = std::move(other.paths_);
    fds_ = std::exchange(other.fds_, {});
    headers_ = std::move(other.headers_);
    tensors_ = std::move(other.tensors_);
  }
  return *this;
}

TensorStore::~TensorStore() { closeFiles(); }

void TensorStore::closeFiles() noexcept {
  for (int fd : fds_) ::close(fd);
  fds_.clear();
}

int TensorStore::addFile(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path.string() + ": cannot open: " + std::strerror(errno));
  fds_.push_back(fd);  // owned from here on: the destructor closes it if parsing throws
  paths_.push_back(path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw Error(path.string() + ": cannot stat: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw Error(path.string() + ": not a regular file");

  const int fileIndex = static_cast<int>(paths_.size()) - 1;
  ParsedHeader parsed = readHeader(fd, path, static_cast<uint64_t>(st.st_size), fileIndex);
  headers_.push_back(
      {std::move(parsed.metadata), parsed.checksum, static_cast<uint64_t>(st.st_size)});
  for (auto& tensor : parsed.tensors) {
    auto [it, inserted] = tensors_.try_emplace(tensor.name, std::move(tensor));
    if (!inserted) {
      throw Error(path.string() + ": tensor " + inQuotes(it->first) + " is also in " +
                  paths_[it->second.fileIndex].string() + "; each tensor must be in one shard");
    }
  }
  return fileIndex;
}

TensorStore TensorStore::openFile(const fs::path& file) {
  TensorStore store;
  store.source_ = file;
  store.addFile(file);
  return store;
}

TensorStore TensorStore::openDirectory(const fs::path& dir) {
  const fs::path indexPath = dir / kIndexFileName;
  if (!pathExists(indexPath)) {
    if (!pathExists(dir / kSingleFileName)) {
      throw Error(dir.string() + ": neither " + kIndexFileName + " nor " + kSingleFileName +
                  " exists");
    }
    return openFile(dir / kSingleFileName);
  }

  const std::string index = indexPath.string();
  json root;
  try {
    root = json::parse(readTextFile(indexPath));
  } catch (const json::exception& e) {
    throw Error(index + ": not valid JSON: " + e.what());
  }
  if (!root.is_object() || !root.contains("weight_map") || !root["weight_map"].is_object()) {
    throw Error(index + ": expected an object with a \"weight_map\" object");
  }
  // Shard name -> the tensors the map puts there; std::map keeps the file order stable.
  std::map<std::string, std::vector<std::string>> shards;
  for (const auto& [name, shard] : root["weight_map"].items()) {
    if (!shard.is_string()) {
      throw Error(index + ": weight_map entry for tensor " + inQuotes(name) +
                  " must be a file name string, got " + shard.dump());
    }
    const auto& shardName = shard.get_ref<const std::string&>();
    if (escapesDirectory(shardName)) {
      throw Error(index + ": shard file name " + inQuotes(shardName) + " for tensor " +
                  inQuotes(name) + " escapes the checkpoint directory");
    }
    shards[shardName].push_back(name);
  }

  TensorStore store;
  store.source_ = dir;
  for (const auto& [shardName, names] : shards) {
    const fs::path shardPath = dir / shardName;
    if (!pathExists(shardPath)) {
      throw Error(index + ": shard " + inQuotes(shardName) + " (listed for tensor " +
                  inQuotes(names.front()) + ") does not exist");
    }
    const int fileIndex = store.addFile(shardPath);
    for (const auto& name : names) {
      const TensorInfo* info = store.find(name);
      if (info == nullptr || info->fileIndex != fileIndex) {
        throw Error(index + ": tensor " + inQuotes(name) + " is listed in weight_map under " +
                    inQuotes(shardName) + " but is absent from that shard");
      }
    }
  }
  return store;
}

bool TensorStore::contains(std::string_view name) const { return find(name) != nullptr; }

const TensorInfo* TensorStore::find(std::string_view name) const {
  const auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

const TensorInfo& TensorStore::get(std::string_view name) const {
  if (const TensorInfo* info = find(name)) return *info;
  throw Error(source_.string() + ": tensor " + inQuotes(name) + " is missing");
}

std::vector<std::string> TensorStore::names() const {
  std::vector<std::string> result;
  result.reserve(tensors_.size());
  for (const auto& entry : tensors_) result.push_back(entry.first);
  std::sort(result.begin(), result.end());
  return result;
}

std::vector<std::byte> TensorStore::readRaw(const TensorInfo& tensor) const {
  std::vector<std::byte> bytes(tensor.nbytes);
  preadAll(fds_.at(tensor.fileIndex), bytes.data(), bytes.size(), tensor.offset,
           paths_.at(tensor.fileIndex), "tensor " + inQuotes(tensor.name));
  return bytes;
}

void TensorStore::readRawRange(const TensorInfo& tensor, uint64_t begin,
                               std::span<std::byte> out) const {
  if (begin > tensor.nbytes || out.size() > tensor.nbytes - begin) {
    throw Error(paths_.at(tensor.fileIndex).string() + ": tensor " + inQuotes(tensor.name) +
                ": bytes [" + std::to_string(begin) + ", " + std::to_string(begin + out.size()) +
                ") are outside its " + std::to_string(tensor.nbytes) + " bytes");
  }
  preadAll(fds_.at(tensor.fileIndex), out.data(), out.size(), tensor.offset + begin,
           paths_.at(tensor.fileIndex), "tensor " + inQuotes(tensor.name));
}

const std::map<std::string, std::string>& TensorStore::metadata(int fileIndex) const {
  return headers_.at(static_cast<size_t>(fileIndex)).metadata;
}

uint64_t TensorStore::headerChecksum(int fileIndex) const {
  return headers_.at(static_cast<size_t>(fileIndex)).checksum;
}

uint64_t TensorStore::fileBytes(int fileIndex) const {
  return headers_.at(static_cast<size_t>(fileIndex)).fileBytes;
}

std::vector<float> TensorStore::readF32(std::string_view name,
                                        std::span<const int64_t> expectedShape,
                                        Fp8BlockSize block) const {
  const TensorInfo& tensor = get(name);
  const std::string where = paths_.at(tensor.fileIndex).string() + ": tensor " + inQuotes(name);
  if (!std::equal(tensor.shape.begin(), tensor.shape.end(), expectedShape.begin(),
                  expectedShape.end())) {
    throw Error(where + " has shape " + shapeString(tensor.shape) + ", expected " +
                shapeString(expectedShape));
  }
  const std::vector<std::byte> raw = readRaw(tensor);
  const size_t count = static_cast<size_t>(tensor.elementCount());
  std::vector<float> out(count);
  switch (tensor.dtype) {
    case DType::F32:
      std::memcpy(out.data(), raw.data(), raw.size());
      break;
    case DType::BF16:
    case DType::F16: {
      const auto convert = tensor.dtype == DType::BF16 ? quant::bf16ToF32 : quant::f16ToF32;
      for (size_t i = 0; i < count; ++i) {
        uint16_t bits;
        std::memcpy(&bits, raw.data() + 2 * i, 2);
        out[i] = convert(bits);
      }
      break;
    }
    case DType::F8_E4M3: {
      if (tensor.shape.size() != 2) {
        throw Error(where + ": FP8 weights must be 2-D, got shape " + shapeString(tensor.shape));
      }
      if (block.rows <= 0 || block.cols <= 0) {
        throw Error(where + ": FP8 block size must be positive");
      }
      const int64_t rows = tensor.shape[0], cols = tensor.shape[1];
      const std::string scaleName = std::string(name) + "_scale_inv";
      const TensorInfo* scale = find(scaleName);
      if (scale == nullptr) {
        throw Error(where + " is FP8 but its scale tensor " + inQuotes(scaleName) + " is missing");
      }
      const std::vector<int64_t> scaleShape{(rows + block.rows - 1) / block.rows,
                                            (cols + block.cols - 1) / block.cols};
      if (scale->dtype != DType::F32 || scale->shape != scaleShape) {
        throw Error(paths_.at(scale->fileIndex).string() + ": scale tensor " + inQuotes(scaleName) +
                    " is " + std::string(dtypeName(scale->dtype)) + " " +
                    shapeString(scale->shape) + ", expected F32 " + shapeString(scaleShape) +
                    " (blocks of " + std::to_string(block.rows) + "x" + std::to_string(block.cols) +
                    ")");
      }
      const std::vector<std::byte> scaleRaw = readRaw(*scale);
      std::vector<float> scales(scaleRaw.size() / sizeof(float));
      std::memcpy(scales.data(), scaleRaw.data(), scaleRaw.size());
      quant::dequantFp8Block(reinterpret_cast<const uint8_t*>(raw.data()), rows, cols,
                             scales.data(), block.rows, block.cols, out.data());
      break;
    }
    case DType::I8:
    case DType::U8:
      throw Error(where + " is " + std::string(dtypeName(tensor.dtype)) +
                  ", not a floating-point weight (quantized codes are read through a container)");
  }
  return out;
}

}  // namespace strata::io
