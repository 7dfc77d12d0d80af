#include "convert/source.h"

#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

#include "core/files.h"
#include "core/text.h"
#include "io/container_format.h"
#include "quant/convert.h"
#include "strata/error.h"

namespace strata::convert {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kIndexName = "model.safetensors.index.json";
constexpr const char* kSingleName = "model.safetensors";
constexpr const char* kScaleSuffix = "_scale_inv";

bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// HF skips a module when a modules_to_not_convert entry names it; we match whole dotted
// components so "mlp.gate" does not match "mlp.gate_proj".
bool moduleMatches(const std::string& module, const std::string& entry) {
  const std::string padded = "." + module + ".";
  return padded.find("." + entry + ".") != std::string::npos;
}

// Everything the shards and the config must agree on, checked without reading tensor data.
void validate(SourceTable& table, const model::ModelConfig& config, const fs::path& dir) {
  std::unordered_map<std::string, size_t> byName;
  for (size_t i = 0; i < table.tensors.size(); ++i) byName[table.tensors[i].name] = i;
  auto where = [&](const SourceTensor& t) {
    return (dir / table.shards[static_cast<size_t>(t.shard)].name).string() + ": tensor " +
           inQuotes(t.name);
  };
  for (SourceTensor& t : table.tensors) {
    if (t.dtype == io::DType::I8 || t.dtype == io::DType::U8)
      throw Error(where(t) + " is " + std::string(io::dtypeName(t.dtype)) +
                  "; a checkpoint to convert holds F32, BF16, F16 or F8_E4M3 tensors");
    if (endsWith(t.name, kScaleSuffix)) {
      const std::string weightName = t.name.substr(0, t.name.size() - std::strlen(kScaleSuffix));
      const auto it = byName.find(weightName);
      if (it == byName.end())
        throw Error(where(t) + " is an FP8 scale, but its weight " + inQuotes(weightName) +
                    " is missing");
      const SourceTensor& w = table.tensors[it->second];
      if (w.dtype != io::DType::F8_E4M3)
        throw Error(where(w) + " is " + std::string(io::dtypeName(w.dtype)) +
                    ", but it has an FP8 block scale " + inQuotes(t.name) +
                    "; weights with a weight_scale_inv must be F8_E4M3");
      continue;
    }
    if (t.dtype != io::DType::F8_E4M3) continue;
    if (t.shape.size() != 2)
      throw Error(where(t) + ": FP8 weights must be 2-D, got shape " + shapeString(t.shape));
    const auto it = byName.find(t.name + kScaleSuffix);
    if (it == byName.end())
      throw Error(where(t) + " is F8_E4M3 but its scale " + inQuotes(t.name + kScaleSuffix) +
                  " is missing");
    const SourceTensor& s = table.tensors[it->second];
    const std::vector<int64_t> expected{
        (t.shape[0] + config.fp8BlockRows - 1) / config.fp8BlockRows,
        (t.shape[1] + config.fp8BlockCols - 1) / config.fp8BlockCols};
    if (s.dtype != io::DType::F32 || s.shape != expected)
      throw Error(where(s) + " is " + std::string(io::dtypeName(s.dtype)) + " " +
                  shapeString(s.shape) + ", expected F32 " + shapeString(expected) +
                  " (the block scales of " + inQuotes(t.name) + " " + shapeString(t.shape) +
                  " in " + std::to_string(config.fp8BlockRows) + "x" +
                  std::to_string(config.fp8BlockCols) + " blocks)");
    t.scale = static_cast<int>(it->second);
  }
  for (const std::string& entry : modulesNotConverted(table.configText))
    for (const SourceTensor& t : table.tensors) {
      const std::string module = t.name.substr(0, t.name.rfind('.'));
      if (t.dtype == io::DType::F8_E4M3 && moduleMatches(module, entry))
        throw Error(where(t) +
                    " is F8_E4M3, but quantization_config.modules_to_not_convert "
                    "lists '" +
                    entry + "' (inconsistent checkpoint)");
    }
}

SourceTable buildTable(const fs::path& dir, std::vector<std::optional<io::TensorStore>>& stores) {
  SourceTable table;
  const fs::path indexPath = dir / kIndexName;
  std::map<std::string, std::vector<std::string>> shardTensors;  // sorted by shard name
  if (pathExists(indexPath)) {
    table.indexText = readTextFile(indexPath);
    json root;
    try {
      root = json::parse(table.indexText);
    } catch (const json::exception& e) {
      throw Error(indexPath.string() + ": not valid JSON: " + e.what());
    }
    if (!root.is_object() || !root.contains("weight_map") || !root["weight_map"].is_object())
      throw Error(indexPath.string() + ": expected an object with a \"weight_map\" object");
    for (const auto& [name, shard] : root["weight_map"].items()) {
      const std::string file = shard.is_string() ? shard.get<std::string>() : std::string();
      if (file.empty() || file.find('/') != std::string::npos || file == "..")
        throw Error(indexPath.string() + ": weight_map entry for tensor " + inQuotes(name) +
                    " must be a shard file name in the same directory, got " + shard.dump());
      shardTensors[file].push_back(name);
    }
  } else if (pathExists(dir / kSingleName)) {
    shardTensors[kSingleName] = {};
  } else {
    throw Error(dir.string() + ": neither " + kIndexName + " nor " + kSingleName +
                " exists (not a safetensors checkpoint)");
  }

  for (auto& [shardName, names] : shardTensors) {
    const fs::path path = dir / shardName;
    if (!pathExists(path))
      throw Error(indexPath.string() + ": shard " + inQuotes(shardName) + " (listed for tensor " +
                  inQuotes(names.front()) + ") does not exist");
    io::TensorStore store = io::TensorStore::openFile(path);
    const int shard = static_cast<int>(table.shards.size());
    table.shards.push_back({shardName, store.fileBytes(0), store.headerChecksum(0)});
    if (names.empty()) names = store.names();
    for (const std::string& name : names) {
      const io::TensorInfo* info = store.find(name);
      if (info == nullptr)
        throw Error(indexPath.string() + ": tensor " + inQuotes(name) + " is listed under " +
                    inQuotes(shardName) + " but is absent from that shard");
      table.tensors.push_back({name, info->dtype, info->shape, shard, -1, info->nbytes});
    }
    stores.emplace_back(std::move(store));
  }
  std::sort(table.tensors.begin(), table.tensors.end(),
            [](const SourceTensor& a, const SourceTensor& b) { return a.name < b.name; });
  return table;
}

}  // namespace

std::string SourceTable::fingerprint() const {
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  auto add = [&](const std::string& text) {
    XXH3_128bits_update(state, text.data(), text.size() + 1);  // with its terminating NUL
  };
  add(configText);
  add(indexText);
  for (const SourceShard& s : shards) {
    add(s.name);
    add(std::to_string(s.fileBytes));
    add(io::hex64(s.headerChecksum));
  }
  const XXH128_hash_t hash = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  return "xxh3-128:" + io::hex64(hash.high64) + io::hex64(hash.low64);
}

std::string SourceTable::toJson() const {
  json root;
  root["config"] = configText;
  root["index"] = indexText;
  json shardList = json::array();
  for (const SourceShard& s : shards)
    shardList.push_back({s.name, s.fileBytes, io::hex64(s.headerChecksum)});
  root["shards"] = shardList;
  json tensorList = json::array();
  for (const SourceTensor& t : tensors)
    tensorList.push_back({t.name, io::dtypeName(t.dtype), t.shape, t.shard, t.bytes});
  root["tensors"] = tensorList;
  return root.dump();
}

SourceTable SourceTable::fromJson(const std::string& text, const std::string& where) {
  SourceTable table;
  try {
    const json root = json::parse(text);
    table.configText = root.at("config").get<std::string>();
    table.indexText = root.at("index").get<std::string>();
    for (const json& s : root.at("shards")) {
      const auto checksum = io::parseHex64(s.at(2).get<std::string>());
      if (!checksum) throw Error(where + ": bad shard header checksum");
      table.shards.push_back({s.at(0).get<std::string>(), s.at(1).get<uint64_t>(), *checksum});
    }
    for (const json& t : root.at("tensors")) {
      SourceTensor tensor;
      tensor.name = t.at(0).get<std::string>();
      const std::string dtype = t.at(1).get<std::string>();
      bool known = false;
      for (io::DType d : {io::DType::F32, io::DType::BF16, io::DType::F16, io::DType::F8_E4M3})
        if (io::dtypeName(d) == dtype) tensor.dtype = d, known = true;
      if (!known) throw Error(where + ": unknown dtype " + dtype);
      tensor.shape = t.at(2).get<std::vector<int64_t>>();
      tensor.shard = t.at(3).get<int>();
      tensor.bytes = t.at(4).get<uint64_t>();
      if (tensor.shard < 0 || static_cast<size_t>(tensor.shard) >= table.shards.size())
        throw Error(where + ": tensor " + inQuotes(tensor.name) + " names no shard");
      table.tensors.push_back(std::move(tensor));
    }
  } catch (const json::exception& e) {
    throw Error(where + ": not a saved source table: " + e.what());
  }
  return table;
}

std::vector<std::string> modulesNotConverted(const std::string& configText) {
  std::vector<std::string> modules;
  const json root = json::parse(configText, nullptr, /*allow_exceptions=*/false);
  if (!root.is_object() || !root.contains("quantization_config")) return modules;
  const json& q = root["quantization_config"];
  if (!q.is_object() || !q.contains("modules_to_not_convert")) return modules;
  for (const json& entry : q["modules_to_not_convert"]) {
    if (!entry.is_string()) continue;
    std::string name = entry.get<std::string>();
    const std::string misnamed = "indexers_proj";
    const size_t at = name.find(misnamed);
    if (at != std::string::npos) name.replace(at, misnamed.size(), "indexer.weights_proj");
    modules.push_back(name);
  }
  return modules;
}

SourceCheckpoint SourceCheckpoint::open(const fs::path& dir, const SourceTable* saved) {
  SourceCheckpoint source;
  source.dir_ = dir;
  const fs::path configPath = dir / "config.json";
  if (!pathExists(dir)) throw Error(dir.string() + ": no such directory");
  if (!pathExists(configPath))
    throw Error(dir.string() + ": config.json is missing (not a Hugging Face model folder?)");
  const std::string configText = readTextFile(configPath);
  source.config_ = model::parseModelConfig(configText, configPath.string());

  if (saved == nullptr) {
    source.table_ = buildTable(dir, source.stores_);
    source.table_.configText = configText;
  } else {
    if (configText != saved->configText)
      throw Error(configPath.string() +
                  " changed since this conversion started; restore it or "
                  "start over in an empty output directory");
    source.table_ = *saved;
    for (const SourceShard& shard : saved->shards) {
      const fs::path path = dir / shard.name;
      if (!pathExists(path)) {
        source.stores_.emplace_back();  // deleted by --delete-input, or lost: checked by caller
        continue;
      }
      io::TensorStore store = io::TensorStore::openFile(path);
      if (store.headerChecksum(0) != shard.headerChecksum || store.fileBytes(0) != shard.fileBytes)
        throw Error(path.string() +
                    " changed since this conversion started (its header or size "
                    "differs); restore it or start over in an empty directory");
      source.stores_.emplace_back(std::move(store));
    }
  }
  validate(source.table_, source.config_, dir);
  return source;
}

void SourceCheckpoint::readRaw(const SourceTensor& tensor, uint64_t begin,
                               std::span<std::byte> out) const {
  const auto& store = stores_.at(static_cast<size_t>(tensor.shard));
  if (!store)
    throw Error((dir_ / table_.shards[static_cast<size_t>(tensor.shard)].name).string() +
                " is missing, but tensor " + inQuotes(tensor.name) +
                " in it has not been converted yet; restore the shard and rerun");
  store->readRawRange(store->get(tensor.name), begin, out);
}

std::vector<float> SourceCheckpoint::readScales(const SourceTensor& weight) const {
  const SourceTensor& scale = table_.tensors.at(static_cast<size_t>(weight.scale));
  std::vector<float> values(scale.bytes / sizeof(float));
  readRaw(scale, 0, std::as_writable_bytes(std::span(values)));
  return values;
}

void sourceRowsToF32(const SourceTensor& tensor, const std::byte* raw, int64_t row0, int64_t rows,
                     int64_t cols, const float* scales, io::Fp8BlockSize block, float* out) {
  const size_t count = static_cast<size_t>(rows * cols);
  switch (tensor.dtype) {
    case io::DType::F32:
      std::memcpy(out, raw, count * sizeof(float));
      return;
    case io::DType::BF16:
    case io::DType::F16: {
      const auto convert = tensor.dtype == io::DType::BF16 ? quant::bf16ToF32 : quant::f16ToF32;
      for (size_t i = 0; i < count; ++i) {
        uint16_t bits;
        std::memcpy(&bits, raw + 2 * i, 2);
        out[i] = convert(bits);
      }
      return;
    }
    case io::DType::F8_E4M3: {
      if (row0 % block.rows != 0)
        throw Error("sourceRowsToF32: FP8 rows must start on a block row");
      const int64_t scaleCols = (cols + block.cols - 1) / block.cols;
      quant::dequantFp8Block(reinterpret_cast<const uint8_t*>(raw), rows, cols,
                             scales + (row0 / block.rows) * scaleCols, block.rows, block.cols, out);
      return;
    }
    case io::DType::I8:
    case io::DType::U8:
      break;
  }
  throw Error("tensor " + inQuotes(tensor.name) + ": not a floating-point source dtype");
}

}  // namespace strata::convert
