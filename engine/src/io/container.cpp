#include "io/container.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "core/files.h"
#include "core/text.h"
#include "io/pread_all.h"
#include "quant/convert.h"
#include "strata/error.h"

namespace strata::io {

namespace fs = std::filesystem;

namespace {

const char* kPartNames[3] = {"gate_proj", "up_proj", "down_proj"};

}  // namespace

bool Container::isContainer(const fs::path& dir) { return pathExists(dir / kManifestName); }

Container::Container(Container&& other) noexcept { *this = std::move(other); }

Container& Container::operator=(Container&& other) noexcept {
  if (this != &other) {
    closeFiles();
    dir_ = std::move(other.dir_);
    manifest_ = std::move(other.manifest_);
    paths_ = std::move(other.paths_);
    fds_ = std::exchange(other.fds_, {});
    tensors_ = std::move(other.tensors_);
    index_ = std::move(other.index_);
    expertLayers_ = std::move(other.expertLayers_);
    experts_ = std::move(other.experts_);
    expertTotal_ = other.expertTotal_;
    verified_ = std::move(other.verified_);
  }
  return *this;
}

Container::~Container() { closeFiles(); }

void Container::closeFiles() noexcept {
  for (int fd : fds_) ::close(fd);
  fds_.clear();
}

Container Container::open(const fs::path& dir) {
  const fs::path manifestPath = dir / kManifestName;
  if (!pathExists(manifestPath))
    throw Error(dir.string() + ": " + kManifestName +
                " is missing: not a Strata container, or its conversion has not finished "
                "(rerun `strata-cli convert` with the same --out to resume it)");
  Container c;
  c.dir_ = dir;
  c.manifest_ = parseManifest(readTextFile(manifestPath), manifestPath.string());
  for (const std::string& name : c.manifest_.copiedFiles)
    if (!pathExists(dir / name))
      throw Error((dir / name).string() + ": listed in " + kManifestName + " but missing");
  for (const auto& file : c.manifest_.files) c.addFile(file);
  std::sort(c.expertLayers_.begin(), c.expertLayers_.end());
  c.verified_ = std::make_unique<std::atomic<bool>[]>(static_cast<size_t>(c.expertTotal_));
  return c;
}

// Opens one file and checks it against the manifest and against the layout its own metadata
// implies, stored tensor by stored tensor.
void Container::addFile(const ContainerManifest::File& file) {
  const fs::path path = dir_ / file.name;
  const std::string where = path.string();
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw Error(where + ": listed in " + kManifestName +
                " but cannot be opened: " + std::strerror(errno));
  if (static_cast<uint64_t>(st.st_size) != file.bytes)
    throw Error(where + ": file is " + std::to_string(st.st_size) + " bytes, the manifest says " +
                std::to_string(file.bytes) + " (truncated or replaced?)");
  const TensorStore store = TensorStore::openFile(path);
  if (store.headerChecksum(0) != file.headerChecksum)
    throw Error(where + ": header checksum " + hex64(store.headerChecksum(0)) +
                " differs from the manifest's " + hex64(file.headerChecksum) +
                " (file replaced or corrupt)");
  ContainerIdentity identity;
  ContainerFile parsed = parseFileMetadata(store.metadata(0), file.name, where, &identity);
  if (identity.sourceFingerprint != manifest_.identity.sourceFingerprint)
    throw Error(where + ": source fingerprint " + identity.sourceFingerprint +
                " differs from the manifest's " + manifest_.identity.sourceFingerprint +
                " (a file from another conversion?)");
  if (parsed.role != file.role || parsed.layer != file.layer)
    throw Error(where + ": its metadata describes a different file than the manifest lists");

  const std::vector<ExpertEntry> recorded = parsed.experts;
  const std::vector<StoredTensor> stored = layoutFile(parsed, identity);
  if (parsed.fileBytes != file.bytes)
    throw Error(where + ": the metadata implies " + std::to_string(parsed.fileBytes) +
                " bytes, the file has " + std::to_string(file.bytes));
  size_t storeCount = store.names().size();
  if (storeCount != stored.size())
    throw Error(where + ": the header holds " + std::to_string(storeCount) +
                " tensors, the metadata implies " + std::to_string(stored.size()));
  for (const StoredTensor& s : stored) {
    const TensorInfo* info = store.find(s.name);
    if (info == nullptr) throw Error(where + ": tensor " + inQuotes(s.name) + " is missing");
    if (info->dtype != s.dtype || info->shape != s.shape ||
        info->offset != parsed.headerBytes + s.offset)
      throw Error(where + ": tensor " + inQuotes(s.name) + " is " +
                  std::string(dtypeName(info->dtype)) + " " + shapeString(info->shape) +
                  " at byte " + std::to_string(info->offset) + ", the metadata implies " +
                  std::string(dtypeName(s.dtype)) + " " + shapeString(s.shape) + " at byte " +
                  std::to_string(parsed.headerBytes + s.offset));
  }

  const int fileIndex = static_cast<int>(paths_.size());
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(where + ": cannot open: " + std::strerror(errno));
  fds_.push_back(fd);
  paths_.push_back(path);

  const size_t firstTensor = tensors_.size();
  for (const TensorEntry& entry : parsed.tensors) {
    ContainerTensor t;
    t.entry = entry;
    t.fileIndex = fileIndex;
    t.dataOffset = parsed.headerBytes + entry.dataOffset;
    t.scalesOffset = parsed.headerBytes + entry.scalesOffset;
    if (!index_.emplace(entry.name, tensors_.size()).second)
      throw Error(where + ": tensor " + inQuotes(entry.name) + " is also in another file");
    tensors_.push_back(std::move(t));
  }
  if (parsed.role == FileRole::Resident) return;

  if (experts_.count(parsed.layer))
    throw Error(where + ": a second experts file for layer " + std::to_string(parsed.layer));
  expertLayers_.push_back(parsed.layer);
  std::vector<ExpertLocation>& locations = experts_[parsed.layer];
  for (size_t i = 0; i < parsed.experts.size(); ++i) {
    const ExpertEntry& e = parsed.experts[i];
    const std::string expertWhere =
        where + ": layer " + std::to_string(parsed.layer) + " expert " + std::to_string(e.expert);
    if (e.expert != static_cast<int>(i))
      throw Error(expertWhere + ": experts must be listed in order 0, 1, 2, ...");
    if (recorded[i].dataOffset != e.dataOffset || recorded[i].bytes != e.bytes ||
        recorded[i].span != e.span)
      throw Error(expertWhere + ": recorded offset/bytes/span disagree with the layout");
    ExpertLocation loc;
    loc.layer = parsed.layer;
    loc.expert = e.expert;
    loc.fileIndex = fileIndex;
    loc.file = path;
    loc.offset = parsed.headerBytes + e.dataOffset;
    loc.bytes = e.bytes;
    loc.span = e.span;
    loc.checksum = recorded[i].checksum;
    if (loc.offset % kExpertAlignment != 0 || loc.offset + loc.span > file.bytes)
      throw Error(expertWhere + ": span is not aligned or runs past the end of the file");
    for (int p = 0; p < 3; ++p) {
      loc.tensors[p] = static_cast<int>(firstTensor) + e.tensors[p];
      tensors_[static_cast<size_t>(loc.tensors[p])].layer = loc.layer;
      tensors_[static_cast<size_t>(loc.tensors[p])].expert = loc.expert;
      if (!isInteger(tensors_[static_cast<size_t>(loc.tensors[p])].entry.format))
        throw Error(expertWhere + ": expert tensors must be int8 or int4");
    }
    loc.slot = expertTotal_++;
    locations.push_back(loc);
  }
}

const ContainerTensor* Container::find(std::string_view name) const {
  const auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

const ContainerTensor& Container::get(std::string_view name) const {
  if (const ContainerTensor* t = find(name)) return *t;
  throw Error(dir_.string() + ": tensor " + inQuotes(name) + " is not in the container");
}

void Container::readAt(int fileIndex, void* out, uint64_t bytes, uint64_t offset,
                       const std::string& what) const {
  preadAll(fds_.at(static_cast<size_t>(fileIndex)), out, bytes, offset,
           paths_[static_cast<size_t>(fileIndex)], what);
}

void Container::checkChecksum(const ContainerTensor& t, bool scales, uint64_t actual) const {
  const uint64_t expected = scales ? t.entry.scalesChecksum : t.entry.dataChecksum;
  if (actual == expected) return;
  const std::string part = scales ? "scales" : (isInteger(t.entry.format) ? "codes" : "values");
  throw Error(paths_[static_cast<size_t>(t.fileIndex)].string() + ": tensor " + inQuotes(t.name()) +
              ": checksum mismatch in its " + part + " (stored " + hex64(expected) + ", read " +
              hex64(actual) + "): the file is corrupt");
}

std::vector<std::byte> Container::readVerified(const ContainerTensor& t, bool scales) const {
  const uint64_t bytes = scales ? t.entry.scalesBytes() : t.entry.dataBytes();
  std::vector<std::byte> out(bytes);
  readAt(t.fileIndex, out.data(), bytes, scales ? t.scalesOffset : t.dataOffset,
         "tensor " + inQuotes(t.name()));
  checkChecksum(t, scales, XXH3_64bits(out.data(), out.size()));
  return out;
}

// The checksum over reads of a few MiB, so a table of any size is verified in bounded memory.
void Container::verifyStreaming(const ContainerTensor& t, bool scales) const {
  const uint64_t bytes = scales ? t.entry.scalesBytes() : t.entry.dataBytes();
  const uint64_t offset = scales ? t.scalesOffset : t.dataOffset;
  std::vector<std::byte> chunk(std::min<uint64_t>(bytes, uint64_t{8} << 20));
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  try {
    for (uint64_t done = 0; done < bytes; done += chunk.size()) {
      const uint64_t n = std::min<uint64_t>(chunk.size(), bytes - done);
      readAt(t.fileIndex, chunk.data(), n, offset + done, "tensor " + inQuotes(t.name()));
      XXH3_64bits_update(state, chunk.data(), n);
    }
  } catch (...) {
    XXH3_freeState(state);
    throw;
  }
  const uint64_t actual = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  checkChecksum(t, scales, actual);
}

std::shared_ptr<const TensorRows> Container::tensorRows(std::string_view name) const {
  const ContainerTensor& t = get(name);
  verifyStreaming(t, false);
  if (isInteger(t.entry.format)) verifyStreaming(t, true);
  return std::make_shared<const TensorRows>(paths_[static_cast<size_t>(t.fileIndex)], t.entry,
                                            t.dataOffset, t.scalesOffset);
}

namespace {

quant::QuantizedMatrix shapeOf(const TensorEntry& e) {
  quant::QuantizedMatrix m;
  m.format = e.format == QuantFormat::Int8 ? quant::IntFormat::Int8 : quant::IntFormat::Int4;
  m.rows = e.rows();
  m.cols = e.cols();
  m.paddedCols = e.paddedCols;
  m.groupSize = e.groupSize;
  return m;
}

// A matrix owning copies of its codes and scales.
quant::QuantizedMatrix assemble(const TensorEntry& e, const std::byte* data,
                                const std::byte* scales) {
  quant::QuantizedMatrix m = shapeOf(e);
  m.data.resize(e.dataBytes());
  std::memcpy(m.data.data(), data, m.data.size());
  if (m.format == quant::IntFormat::Int8) {
    m.scales.resize(e.scalesBytes() / sizeof(float));
    std::memcpy(m.scales.data(), scales, e.scalesBytes());
  } else {
    m.bf16Scales.resize(e.scalesBytes() / sizeof(uint16_t));
    std::memcpy(m.bf16Scales.data(), scales, e.scalesBytes());
  }
  return m;
}

// A matrix viewing codes and scales where they lie; `owner` keeps them alive.
quant::QuantizedMatrix assembleView(const TensorEntry& e, const std::byte* data,
                                    const std::byte* scales, std::shared_ptr<const void> owner) {
  quant::QuantizedMatrix m = shapeOf(e);
  m.viewCodes = reinterpret_cast<const uint8_t*>(data);
  m.viewScales = scales;
  m.owner = std::move(owner);
  return m;
}

}  // namespace

quant::QuantizedMatrix Container::readQuantized(std::string_view name) const {
  const ContainerTensor& t = get(name);
  if (!isInteger(t.entry.format))
    throw Error(paths_[static_cast<size_t>(t.fileIndex)].string() + ": tensor " + inQuotes(name) +
                " is stored " + std::string(quantFormatName(t.entry.format)) +
                ", not int8/int4 (read it as f32)");
  const std::vector<std::byte> data = readVerified(t, false);
  const std::vector<std::byte> scales = readVerified(t, true);
  return assemble(t.entry, data.data(), scales.data());
}

std::vector<float> Container::readF32(std::string_view name) const {
  const ContainerTensor& t = get(name);
  const auto count = static_cast<size_t>(t.entry.rows() * t.entry.cols());
  std::vector<float> out(count);
  switch (t.entry.format) {
    case QuantFormat::F32: {
      const std::vector<std::byte> raw = readVerified(t, false);
      std::memcpy(out.data(), raw.data(), raw.size());
      break;
    }
    case QuantFormat::BF16: {
      const std::vector<std::byte> raw = readVerified(t, false);
      for (size_t i = 0; i < count; ++i) {
        uint16_t bits;
        std::memcpy(&bits, raw.data() + 2 * i, 2);
        out[i] = quant::bf16ToF32(bits);
      }
      break;
    }
    case QuantFormat::Int8:
    case QuantFormat::Int4: {
      const quant::QuantizedMatrix m = readQuantized(name);
      for (int64_t r = 0; r < m.rows; ++r) quant::dequantizeRow(m, r, out.data() + r * m.cols);
      break;
    }
  }
  return out;
}

int Container::expertCount(int layer) const {
  const auto it = experts_.find(layer);
  return it == experts_.end() ? 0 : static_cast<int>(it->second.size());
}

const ExpertLocation& Container::expert(int layer, int expert) const {
  const auto it = experts_.find(layer);
  if (it == experts_.end() || expert < 0 || expert >= static_cast<int>(it->second.size()))
    throw Error(dir_.string() + ": layer " + std::to_string(layer) + " expert " +
                std::to_string(expert) + " is not in the container");
  return it->second[static_cast<size_t>(expert)];
}

void Container::readExpertBytes(const ExpertLocation& loc, std::span<std::byte> buffer) const {
  if (buffer.size() < loc.span)
    throw Error("readExpertBytes: buffer of " + std::to_string(buffer.size()) +
                " bytes is smaller than the expert's span of " + std::to_string(loc.span));
  readAt(loc.fileIndex, buffer.data(), loc.span, loc.offset,
         "layer " + std::to_string(loc.layer) + " expert " + std::to_string(loc.expert));
}

void Container::verifyExpert(const ExpertLocation& loc, std::span<const std::byte> bytes) const {
  const std::string where = loc.file.string() + ": layer " + std::to_string(loc.layer) +
                            " expert " + std::to_string(loc.expert);
  if (bytes.size() < loc.bytes)
    throw Error(where + ": got " + std::to_string(bytes.size()) + " bytes, the expert has " +
                std::to_string(loc.bytes));
  std::atomic<bool>& verified = verified_[static_cast<size_t>(loc.slot)];
  if (!verified.load(std::memory_order_acquire)) {
    const uint64_t actual = XXH3_64bits(bytes.data(), loc.bytes);
    if (actual != loc.checksum) {
      // Name the part that is off, to tell a flipped bit from a misplaced read.
      std::string part = "the expert's bytes";
      for (int p = 0; p < 3; ++p) {
        const TensorEntry& e = tensors_[static_cast<size_t>(loc.tensors[p])].entry;
        const uint64_t at = tensors_[static_cast<size_t>(loc.tensors[p])].dataOffset - loc.offset;
        const uint64_t sat =
            tensors_[static_cast<size_t>(loc.tensors[p])].scalesOffset - loc.offset;
        if (XXH3_64bits(bytes.data() + at, e.dataBytes()) != e.dataChecksum) {
          part = std::string(kPartNames[p]) + " codes";
          break;
        }
        if (XXH3_64bits(bytes.data() + sat, e.scalesBytes()) != e.scalesChecksum) {
          part = std::string(kPartNames[p]) + " scales";
          break;
        }
      }
      throw Error(where + ": checksum mismatch (stored " + hex64(loc.checksum) + ", read " +
                  hex64(actual) + ", in " + part + "): the file is corrupt");
    }
    verified.store(true, std::memory_order_release);
  }
}

ExpertMatrices Container::decodeExpert(const ExpertLocation& loc,
                                       std::span<const std::byte> bytes) const {
  verifyExpert(loc, bytes);
  ExpertMatrices m;
  quant::QuantizedMatrix* parts[3] = {&m.gate, &m.up, &m.down};
  for (int p = 0; p < 3; ++p) {
    const ContainerTensor& t = tensors_[static_cast<size_t>(loc.tensors[p])];
    *parts[p] = assemble(t.entry, bytes.data() + (t.dataOffset - loc.offset),
                         bytes.data() + (t.scalesOffset - loc.offset));
  }
  return m;
}

ExpertMatrices Container::viewExpert(const ExpertLocation& loc, std::span<const std::byte> bytes,
                                     const std::shared_ptr<const void>& owner) const {
  verifyExpert(loc, bytes);
  ExpertMatrices m;
  quant::QuantizedMatrix* parts[3] = {&m.gate, &m.up, &m.down};
  for (int p = 0; p < 3; ++p) {
    const ContainerTensor& t = tensors_[static_cast<size_t>(loc.tensors[p])];
    if (t.scalesOffset % dtypeSize(t.entry.scalesDType()) != 0)
      throw Error(loc.file.string() + ": layer " + std::to_string(loc.layer) + " expert " +
                  std::to_string(loc.expert) + ": scales at an unaligned offset");
    *parts[p] = assembleView(t.entry, bytes.data() + (t.dataOffset - loc.offset),
                             bytes.data() + (t.scalesOffset - loc.offset), owner);
  }
  return m;
}

ExpertMatrices Container::readExpert(int layer, int expertIndex) const {
  const ExpertLocation& loc = expert(layer, expertIndex);
  std::vector<std::byte> buffer(loc.span);
  readExpertBytes(loc, buffer);
  return decodeExpert(loc, buffer);
}

}  // namespace strata::io
