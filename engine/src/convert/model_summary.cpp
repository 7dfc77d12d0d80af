// inspectModel and fitVerdict (strata/inspect.h): a model folder summarized from its config
// and headers, never its weights.
#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "convert/plan.h"
#include "convert/policy.h"
#include "convert/source.h"
#include "io/container.h"
#include "io/durable_file.h"
#include "strata/inspect.h"
#include "tier/memory_plan.h"

namespace strata {

namespace fs = std::filesystem;

namespace {

using Census = std::map<std::pair<std::string, std::string>, TensorCensusRow>;

void count(Census& census, convert::TensorRole role, const std::string& format, uint64_t bytes) {
  TensorCensusRow& row = census[{std::string(convert::roleName(role)), format}];
  row.role = convert::roleName(role);
  row.format = format;
  ++row.tensors;
  row.bytes += bytes;
}

std::string formatOf(const io::TensorEntry& e) {
  if (!io::isInteger(e.format)) return std::string(io::quantFormatName(e.format));
  return convert::describe({e.format, e.groupSize == e.paddedCols ? 0 : e.groupSize});
}

uint64_t folderBytes(const fs::path& dir) {
  uint64_t total = 0;
  std::error_code error;
  for (const auto& entry : fs::recursive_directory_iterator(dir, error))
    if (entry.is_regular_file(error)) total += entry.file_size(error);
  return total;
}

void summarizeContainer(ModelSummary& s, const model::ModelConfig& config) {
  const io::Container container = io::Container::open(s.directory);
  Census census;
  for (const io::ContainerTensor& t : container.tensors()) {
    count(census, convert::classifyTensor(t.name()).role, formatOf(t.entry), t.storedBytes());
    if (t.expert >= 0) s.streamedBytes += t.storedBytes();
  }
  // As the engine holds them (the app's native precision: norms and a few small gates widened
  // to f32), which is what the verdict must compare with the machine's memory.
  s.residentBytes = static_cast<uint64_t>(
      tier::residentTensorBytes(config, container, model::WeightPrecision::Native));
  if (!container.expertLayers().empty())
    s.expertBytes = container.expert(container.expertLayers().front(), 0).span;
  const auto policy = nlohmann::json::parse(container.manifest().identity.policy, nullptr, false);
  s.weightFormat = "strata container, policy " +
                   (policy.is_object() ? policy.value("name", std::string("?")) : "?");
  s.sourceFingerprint = container.manifest().identity.sourceFingerprint;
  for (auto& [key, row] : census) s.census.push_back(row);
}

void summarizeCheckpoint(ModelSummary& s) {
  const convert::SourceCheckpoint source = convert::SourceCheckpoint::open(s.directory);
  const convert::SourceTable& table = source.table();
  Census census;
  bool fp8 = false;
  std::map<std::string, int> dtypes;
  int firstExpertLayer = -1;
  const std::string scaleSuffix = "_scale_inv";
  for (const convert::SourceTensor& t : table.tensors) {
    const bool isScale =
        t.name.size() > scaleSuffix.size() &&
        t.name.compare(t.name.size() - scaleSuffix.size(), scaleSuffix.size(), scaleSuffix) == 0;
    if (isScale) continue;  // counted with its weight
    uint64_t bytes = t.bytes;
    if (t.scale >= 0) bytes += table.tensors[static_cast<size_t>(t.scale)].bytes;
    const convert::TensorName n = convert::classifyTensor(t.name);
    count(census, n.role, std::string(io::dtypeName(t.dtype)), bytes);
    (n.role == convert::TensorRole::RoutedExpert ? s.streamedBytes : s.residentBytes) += bytes;
    if (n.role == convert::TensorRole::RoutedExpert && n.expert == 0 &&
        (firstExpertLayer < 0 || n.layer == firstExpertLayer)) {
      firstExpertLayer = n.layer;
      s.expertBytes += bytes;
    }
    fp8 = fp8 || t.dtype == io::DType::F8_E4M3;
    ++dtypes[std::string(io::dtypeName(t.dtype))];
  }
  for (const std::string& policy : convert::policyNames()) {
    const convert::ContainerPlan plan =
        convert::planContainer(table, source.config(), convert::policyByName(policy));
    ConvertedSize size;
    size.policy = policy;
    // As the engine will hold the converted weights, like a container's residentBytes.
    size.residentBytes = static_cast<uint64_t>(
        tier::residentTensorBytes(source.config(), plan.files, model::WeightPrecision::Native));
    for (const io::ContainerFile& f : plan.files) {
      if (f.role != io::FileRole::Experts) continue;
      size.streamedBytes += f.fileBytes;
      if (!f.experts.empty() && size.expertBytes == 0) size.expertBytes = f.experts.front().span;
    }
    s.conversions.push_back(size);
  }
  s.convertedResidentBytes = s.conversions.front().residentBytes;  // "default"
  s.convertedStreamedBytes = s.conversions.front().streamedBytes;
  s.convertedExpertBytes = s.conversions.front().expertBytes;
  if (fp8) {
    s.weightFormat = "Hugging Face, FP8 e4m3 with " + std::to_string(source.config().fp8BlockRows) +
                     "x" + std::to_string(source.config().fp8BlockCols) + " block scales";
  } else {
    const auto most = std::max_element(dtypes.begin(), dtypes.end(),
                                       [](auto& a, auto& b) { return a.second < b.second; });
    s.weightFormat = "Hugging Face, " + (most == dtypes.end() ? std::string("empty") : most->first);
  }
  s.sourceFingerprint = table.fingerprint();
  for (auto& [key, row] : census) s.census.push_back(row);
}

std::string gb(uint64_t bytes) {
  char text[32];
  if (bytes >= 100000000ull)
    std::snprintf(text, sizeof text, "%.2f GB", static_cast<double>(bytes) / 1e9);
  else
    std::snprintf(text, sizeof text, "%.2f MB", static_cast<double>(bytes) / 1e6);
  return text;
}

}  // namespace

ModelSummary inspectModel(const fs::path& dir) {
  std::error_code error;
  if (!fs::is_directory(dir, error)) throw Error(dir.string() + ": not a directory");
  ModelSummary s;
  s.directory = dir;
  const fs::path configPath = dir / "config.json";
  if (!fs::exists(configPath, error))
    throw Error(dir.string() + ": config.json is missing (not a model folder?)");
  const std::string configText = io::readFileText(configPath);
  const model::ModelConfig config = model::parseModelConfig(configText, configPath.string());
  const auto root = nlohmann::json::parse(configText, nullptr, false);
  if (root.is_object() && root.contains("architectures") && root["architectures"].is_array() &&
      !root["architectures"].empty() && root["architectures"][0].is_string())
    s.architecture = root["architectures"][0].get<std::string>();
  s.modelType = config.modelType;
  s.hiddenSize = config.hiddenSize;
  s.vocabSize = config.vocabSize;
  s.layers = config.numHiddenLayers;
  for (bool moe : config.layerIsMoe) (moe ? s.moeLayers : s.denseLayers) += 1;
  s.hasMtp = config.hasMtp();
  s.routedExperts = config.nRoutedExperts;
  s.expertsPerToken = config.numExpertsPerTok;
  s.sharedExperts = config.nSharedExperts;
  s.kvBytesPerToken = sizeof(float) * static_cast<uint64_t>(config.kvValuesPerToken());
  s.bytesOnDisk = folderBytes(dir);
  s.isContainer = io::Container::isContainer(dir);
  if (s.isContainer)
    summarizeContainer(s, config);
  else
    summarizeCheckpoint(s);
  // `strata-cli synth` marks its random-weight models here (synth/synthetic_config.h).
  if (root.is_object() && root.contains("strata_synthetic"))
    s.weightFormat += ", synthetic (random weights)";
  std::sort(s.census.begin(), s.census.end(),
            [](const TensorCensusRow& a, const TensorCensusRow& b) { return a.bytes > b.bytes; });
  return s;
}

FitVerdict fitVerdict(const ModelSummary& model, const MachineSummary& machine, int contextTokens) {
  FitVerdict v;
  const uint64_t resident = model.isContainer ? model.residentBytes : model.convertedResidentBytes;
  const uint64_t kv = model.kvBytesPerToken * static_cast<uint64_t>(contextTokens);
  v.neededBytes = resident + kv;
  v.fits = v.neededBytes <= machine.ramAvailable;
  v.fitsTotal = v.neededBytes <= machine.ramTotal;
  const std::string need = gb(resident) + " resident" + (model.isContainer ? "" : " (converted)") +
                           " + " + gb(kv) + " KV for " + std::to_string(contextTokens) +
                           " tokens = " + gb(v.neededBytes);
  if (v.fits)
    v.text = "fits: " + need + " of " + gb(machine.ramAvailable) + " available, leaving " +
             gb(machine.ramAvailable - v.neededBytes) + " to cache experts streamed from disk";
  else if (v.fitsTotal)
    v.text = "tight: " + need + ", but only " + gb(machine.ramAvailable) + " of " +
             gb(machine.ramTotal) + " is available now; close other programs";
  else
    v.text = "does not fit: " + need + ", more than the machine's " + gb(machine.ramTotal);
  return v;
}

std::string policyThatFits(const ModelSummary& model, const MachineSummary& machine,
                           int contextTokens) {
  const uint64_t kv = model.kvBytesPerToken * static_cast<uint64_t>(contextTokens);
  for (const char* policy : {"default", "int4-g32", "int4-g64", "int4-g128", "int4-row"})
    for (const ConvertedSize& c : model.conversions)
      if (c.policy == policy && c.residentBytes + kv <= machine.ramAvailable) return policy;
  return {};
}

}  // namespace strata
