#include "io/container_format.h"

#include <charconv>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "core/text.h"
#include "quant/int_quant.h"
#include "strata/error.h"

namespace strata::io {
namespace {

using ordered_json = nlohmann::ordered_json;

uint64_t roundUp(uint64_t value, uint64_t unit) { return (value + unit - 1) / unit * unit; }

// The keys naming an expert's three tensors in the "experts" metadata.
const char* kProjectionKeys[3] = {"gate", "up", "down"};

std::string padName(int expert) { return "strata.pad." + std::to_string(expert); }

// Assigns offsets in file order and returns the stored tensors (codes, scales, padding).
std::vector<StoredTensor> placeTensors(ContainerFile& file) {
  std::vector<StoredTensor> stored;
  uint64_t offset = 0;
  auto place = [&](TensorEntry& t) {
    t.dataOffset = offset;
    stored.push_back({t.name, t.dataDType(), t.dataShape(), offset, t.dataBytes()});
    offset += t.dataBytes();
    if (isInteger(t.format)) {
      t.scalesOffset = offset;
      stored.push_back({t.scalesName(), t.scalesDType(), t.scalesShape(), offset, t.scalesBytes()});
      offset += t.scalesBytes();
    }
  };
  if (file.role == FileRole::Resident) {
    for (TensorEntry& t : file.tensors) place(t);
    return stored;
  }
  std::vector<bool> used(file.tensors.size(), false);
  for (ExpertEntry& e : file.experts) {
    e.dataOffset = offset;
    for (int index : e.tensors) {
      if (index < 0 || static_cast<size_t>(index) >= file.tensors.size() || used[index])
        throw Error(file.name + ": expert " + std::to_string(e.expert) +
                    " names a tensor that is missing or belongs to another expert");
      used[index] = true;
      place(file.tensors[static_cast<size_t>(index)]);
    }
    e.bytes = offset - e.dataOffset;
    e.span = roundUp(e.bytes, kExpertAlignment);
    if (e.span > e.bytes) {
      const auto pad = static_cast<int64_t>(e.span - e.bytes);
      stored.push_back({padName(e.expert), DType::U8, {pad}, offset, e.span - e.bytes});
      offset = e.dataOffset + e.span;
    }
  }
  for (size_t i = 0; i < used.size(); ++i)
    if (!used[i])
      throw Error(file.name + ": tensor " + inQuotes(file.tensors[i].name) +
                  " belongs to no expert of this experts file");
  return stored;
}

ordered_json tensorMetadata(const TensorEntry& t) {
  ordered_json entry;
  entry["format"] = quantFormatName(t.format);
  entry["shape"] = t.shape;
  if (isInteger(t.format)) {
    entry["group_size"] = t.groupSize;
    entry["padded_cols"] = t.paddedCols;
  }
  entry["xxh3"] = hex64(t.dataChecksum);
  if (isInteger(t.format)) entry["scales_xxh3"] = hex64(t.scalesChecksum);
  return entry;
}

// The JSON header text after placement, padded with spaces so the data section starts on the
// file's alignment.
std::string headerText(const ContainerFile& file, const std::vector<StoredTensor>& stored,
                       const ContainerIdentity& identity) {
  ordered_json metadata;
  metadata["format"] = kContainerFormat;
  metadata["format_version"] = std::to_string(kContainerVersion);
  metadata["source_fingerprint"] = identity.sourceFingerprint;
  metadata["policy"] = identity.policy;
  metadata["converter"] = identity.converter;
  metadata["file_role"] = file.role == FileRole::Resident ? "resident" : "experts";
  if (file.role == FileRole::Experts) metadata["layer"] = std::to_string(file.layer);
  ordered_json tensors = ordered_json::object();
  for (const TensorEntry& t : file.tensors) tensors[t.name] = tensorMetadata(t);
  metadata["tensors"] = tensors.dump();
  if (file.role == FileRole::Experts) {
    ordered_json experts = ordered_json::array();
    for (const ExpertEntry& e : file.experts) {
      ordered_json entry;
      entry["expert"] = e.expert;
      for (int p = 0; p < 3; ++p)
        entry[kProjectionKeys[p]] = file.tensors[static_cast<size_t>(e.tensors[p])].name;
      entry["data_offset"] = e.dataOffset;
      entry["bytes"] = e.bytes;
      entry["span"] = e.span;
      entry["xxh3"] = hex64(e.checksum);
      experts.push_back(entry);
    }
    metadata["experts"] = experts.dump();
  }

  ordered_json header;
  header["__metadata__"] = metadata;
  for (const StoredTensor& s : stored)
    header[s.name] = {{"dtype", dtypeName(s.dtype)},
                      {"shape", s.shape},
                      {"data_offsets", {s.offset, s.offset + s.bytes}}};
  std::string text = header.dump();
  const uint64_t alignment = file.role == FileRole::Experts ? kExpertAlignment : kResidentAlignment;
  text.append(roundUp(8 + text.size(), alignment) - 8 - text.size(), ' ');
  return text;
}

}  // namespace

std::string expertFileName(int layer) {
  char name[64];
  std::snprintf(name, sizeof name, "experts-%03d.safetensors", layer);
  return name;
}

std::string_view quantFormatName(QuantFormat format) {
  switch (format) {
    case QuantFormat::F32:
      return "f32";
    case QuantFormat::BF16:
      return "bf16";
    case QuantFormat::Int8:
      return "int8";
    case QuantFormat::Int4:
      return "int4";
  }
  return "?";
}

std::optional<QuantFormat> parseQuantFormat(std::string_view name) {
  for (QuantFormat f : {QuantFormat::F32, QuantFormat::BF16, QuantFormat::Int8, QuantFormat::Int4})
    if (quantFormatName(f) == name) return f;
  return std::nullopt;
}

std::string hex64(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

std::optional<uint64_t> parseHex64(std::string_view text) {
  if (text.size() != 16) return std::nullopt;
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

int64_t TensorEntry::rows() const { return shape.empty() || shape.size() == 1 ? 1 : shape[0]; }

int64_t TensorEntry::cols() const {
  if (shape.empty()) return 1;
  if (shape.size() == 1) return shape[0];
  int64_t cols = 1;
  for (size_t i = 1; i < shape.size(); ++i) cols *= shape[i];
  return cols;
}

DType TensorEntry::dataDType() const {
  switch (format) {
    case QuantFormat::F32:
      return DType::F32;
    case QuantFormat::BF16:
      return DType::BF16;
    case QuantFormat::Int8:
      return DType::I8;
    case QuantFormat::Int4:
      return DType::U8;
  }
  return DType::U8;
}

std::vector<int64_t> TensorEntry::dataShape() const {
  if (format == QuantFormat::Int8) return {rows(), paddedCols};
  if (format == QuantFormat::Int4) return {rows(), paddedCols / 2};
  return shape;
}

uint64_t TensorEntry::dataBytes() const {
  const auto count = static_cast<uint64_t>(rows() * cols());
  switch (format) {
    case QuantFormat::F32:
      return count * 4;
    case QuantFormat::BF16:
      return count * 2;
    case QuantFormat::Int8:
      return static_cast<uint64_t>(rows() * paddedCols);
    case QuantFormat::Int4:
      return static_cast<uint64_t>(rows() * paddedCols / 2);
  }
  return 0;
}

std::vector<int64_t> TensorEntry::scalesShape() const {
  return {rows(), groupSize > 0 ? paddedCols / groupSize : 0};
}

uint64_t TensorEntry::scalesBytes() const {
  if (!isInteger(format)) return 0;
  return static_cast<uint64_t>(rows() * (paddedCols / groupSize)) * dtypeSize(scalesDType());
}

DType TensorEntry::scalesDType() const {
  return format == QuantFormat::Int4 ? DType::BF16 : DType::F32;
}

TensorEntry TensorEntry::make(std::string name, std::vector<int64_t> shape, QuantFormat format,
                              int64_t requestedGroup) {
  TensorEntry t;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.format = format;
  if (isInteger(format)) {
    if (t.shape.size() != 2)
      throw Error("tensor " + inQuotes(t.name) + ": " + std::string(quantFormatName(format)) +
                  " needs a 2-D tensor");
    t.paddedCols = quant::quantizedPaddedCols(t.cols(), requestedGroup);
    t.groupSize = requestedGroup == 0 ? t.paddedCols : requestedGroup;
  }
  return t;
}

std::vector<StoredTensor> layoutFile(ContainerFile& file, const ContainerIdentity& identity) {
  std::vector<StoredTensor> stored = placeTensors(file);
  const uint64_t dataEnd = stored.empty() ? 0 : stored.back().offset + stored.back().bytes;
  file.headerBytes = 8 + headerText(file, stored, identity).size();
  file.fileBytes = file.headerBytes + dataEnd;
  return stored;
}

std::string buildHeader(const ContainerFile& file, const ContainerIdentity& identity) {
  ContainerFile copy = file;
  const std::string text = headerText(copy, placeTensors(copy), identity);
  std::string block(8, '\0');
  for (int i = 0; i < 8; ++i) block[i] = static_cast<char>((text.size() >> (8 * i)) & 0xFF);
  return block + text;
}

namespace {

// Typed access to one JSON object of the metadata; every failure names the file and the field.
class FieldReader {
 public:
  FieldReader(const ordered_json& object, std::string where)
      : object_(object), where_(std::move(where)) {}

  [[noreturn]] void fail(const std::string& problem) const { throw Error(where_ + ": " + problem); }

  const ordered_json& field(const char* key) const {
    const auto it = object_.find(key);
    if (it == object_.end()) fail(std::string("missing \"") + key + "\"");
    return *it;
  }
  std::string text(const char* key) const {
    const ordered_json& v = field(key);
    if (!v.is_string()) fail(std::string("\"") + key + "\" must be a string, got " + v.dump());
    return v.get<std::string>();
  }
  uint64_t unsignedInt(const char* key) const {
    const ordered_json& v = field(key);
    if (!v.is_number_unsigned())
      fail(std::string("\"") + key + "\" must be a non-negative integer, got " + v.dump());
    return v.get<uint64_t>();
  }
  uint64_t checksum(const char* key) const {
    const auto value = parseHex64(text(key));
    if (!value) fail(std::string("\"") + key + "\" must be 16 hex digits");
    return *value;
  }

 private:
  const ordered_json& object_;
  std::string where_;
};

ordered_json parseJsonField(const std::map<std::string, std::string>& metadata, const char* key,
                            const std::string& where) {
  const auto it = metadata.find(key);
  if (it == metadata.end()) throw Error(where + ": \"__metadata__\" lacks \"" + key + "\"");
  try {
    return ordered_json::parse(it->second);
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + ": \"__metadata__\" field \"" + key + "\" is not valid JSON: " + e.what());
  }
}

TensorEntry parseTensor(const std::string& name, const ordered_json& value,
                        const std::string& where) {
  const FieldReader r(value, where + ": tensor " + inQuotes(name));
  if (!value.is_object()) r.fail("entry must be an object");
  TensorEntry t;
  t.name = name;
  const std::string formatName = r.text("format");
  const auto format = parseQuantFormat(formatName);
  if (!format)
    r.fail("quant format '" + formatName + "' is unknown (expected f32, bf16, int8, int4)");
  t.format = *format;
  const ordered_json& shape = r.field("shape");
  if (!shape.is_array()) r.fail("\"shape\" must be an array");
  for (const ordered_json& dim : shape) {
    if (!dim.is_number_unsigned()) r.fail("\"shape\" must hold non-negative integers");
    t.shape.push_back(dim.get<int64_t>());
  }
  t.dataChecksum = r.checksum("xxh3");
  if (!isInteger(t.format)) return t;

  if (t.shape.size() != 2) r.fail(formatName + " tensors must be 2-D");
  t.groupSize = static_cast<int64_t>(r.unsignedInt("group_size"));
  t.paddedCols = static_cast<int64_t>(r.unsignedInt("padded_cols"));
  t.scalesChecksum = r.checksum("scales_xxh3");
  const bool perRow =
      t.groupSize == t.paddedCols && t.paddedCols == quant::quantizedPaddedCols(t.cols(), 0);
  const bool grouped = t.groupSize >= quant::kBlock && (t.groupSize & (t.groupSize - 1)) == 0 &&
                       t.paddedCols == quant::quantizedPaddedCols(t.cols(), t.groupSize);
  if (!perRow && !grouped)
    r.fail("group_size " + std::to_string(t.groupSize) + " and padded_cols " +
           std::to_string(t.paddedCols) + " do not fit " + std::to_string(t.cols()) + " columns");
  return t;
}

}  // namespace

std::string unsupportedVersionText(const std::string& version) {
  const std::string text = "container format version " + version +
                           " is not supported by this build (it reads version " +
                           std::to_string(kContainerVersion) + ")";
  int v = 0;
  const auto [end, ec] = std::from_chars(version.data(), version.data() + version.size(), v);
  if (ec == std::errc() && end == version.data() + version.size() && v < kContainerVersion)
    return text +
           "; the model was converted by an older Strata: convert it again with "
           "strata-cli convert (or write it again with strata-cli synth)";
  return text;
}

ContainerFile parseFileMetadata(const std::map<std::string, std::string>& metadata,
                                const std::string& fileName, const std::string& where,
                                ContainerIdentity* identity) {
  auto get = [&](const char* key) -> const std::string& {
    const auto it = metadata.find(key);
    if (it == metadata.end())
      throw Error(where + ": \"__metadata__\" lacks \"" + key +
                  "\"; not a file of a Strata container");
    return it->second;
  };
  if (get("format") != kContainerFormat)
    throw Error(where + ": \"__metadata__\" format is '" + get("format") + "', expected '" +
                kContainerFormat + "'");
  if (get("format_version") != std::to_string(kContainerVersion))
    throw Error(where + ": " + unsupportedVersionText(get("format_version")));
  if (identity) *identity = {get("source_fingerprint"), get("policy"), get("converter")};

  ContainerFile file;
  file.name = fileName;
  const std::string& role = get("file_role");
  if (role == "resident") {
    file.role = FileRole::Resident;
  } else if (role == "experts") {
    file.role = FileRole::Experts;
    const std::string& layer = get("layer");
    const auto [end, ec] = std::from_chars(layer.data(), layer.data() + layer.size(), file.layer);
    if (ec != std::errc() || end != layer.data() + layer.size() || file.layer < 0)
      throw Error(where + ": \"__metadata__\" layer '" + layer + "' is not a layer index");
  } else {
    throw Error(where + ": \"__metadata__\" file_role '" + role +
                "' is unknown (expected resident or experts)");
  }

  const ordered_json tensors = parseJsonField(metadata, "tensors", where);
  if (!tensors.is_object()) throw Error(where + ": \"tensors\" metadata must be a JSON object");
  std::map<std::string, int> indexOf;
  for (const auto& [name, value] : tensors.items()) {
    indexOf[name] = static_cast<int>(file.tensors.size());
    file.tensors.push_back(parseTensor(name, value, where));
  }
  if (file.role == FileRole::Resident) return file;

  const ordered_json experts = parseJsonField(metadata, "experts", where);
  if (!experts.is_array()) throw Error(where + ": \"experts\" metadata must be a JSON array");
  for (const ordered_json& value : experts) {
    const FieldReader r(value, where + ": expert entry " + value.dump().substr(0, 80));
    if (!value.is_object()) r.fail("must be an object");
    ExpertEntry e;
    e.expert = static_cast<int>(r.unsignedInt("expert"));
    for (int p = 0; p < 3; ++p) {
      const std::string name = r.text(kProjectionKeys[p]);
      const auto it = indexOf.find(name);
      if (it == indexOf.end()) r.fail("names tensor " + inQuotes(name) + ", which is not listed");
      e.tensors[p] = it->second;
    }
    e.dataOffset = r.unsignedInt("data_offset");
    e.bytes = r.unsignedInt("bytes");
    e.span = r.unsignedInt("span");
    e.checksum = r.checksum("xxh3");
    file.experts.push_back(e);
  }
  return file;
}

}  // namespace strata::io
