#include "convert/plan.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>

#include "core/files.h"
#include "core/text.h"
#include "strata/error.h"

namespace strata::convert {
namespace {

constexpr const char* kProjectionNames[3] = {"gate_proj", "up_proj", "down_proj"};

bool isScale(const std::string& name) {
  const std::string suffix = "_scale_inv";
  return name.size() > suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

using ExpertSlots = std::map<int, std::array<int, 3>>;  // expert -> source index per projection

void checkLayerExperts(int layer, const ExpertSlots& experts, const SourceTable& table,
                       const model::ModelConfig& config) {
  const std::string prefix = "model.layers." + std::to_string(layer) + ".mlp.experts.";
  const int64_t hidden = config.hiddenSize, width = config.moeIntermediateSize;
  const std::vector<int64_t> shapes[3] = {{width, hidden}, {width, hidden}, {hidden, width}};
  for (int e = 0; e < config.nRoutedExperts; ++e) {
    const auto it = experts.find(e);
    for (int p = 0; p < 3; ++p) {
      const std::string name = prefix + std::to_string(e) + "." + kProjectionNames[p] + ".weight";
      if (it == experts.end() || it->second[p] < 0)
        throw Error("layer " + std::to_string(layer) + " expert " + std::to_string(e) +
                    ": tensor " + inQuotes(name) + " is missing from the checkpoint");
      const SourceTensor& t = table.tensors[static_cast<size_t>(it->second[p])];
      if (t.shape != shapes[p])
        throw Error("tensor " + inQuotes(name) + " has shape " + shapeString(t.shape) +
                    ", expected " + shapeString(shapes[p]) + " from config.json");
    }
  }
  if (!experts.empty() && experts.rbegin()->first >= config.nRoutedExperts)
    throw Error("layer " + std::to_string(layer) + " holds expert " +
                std::to_string(experts.rbegin()->first) +
                ", but config.json has n_routed_experts " + std::to_string(config.nRoutedExperts));
}

ConvertUnit makeUnit(std::string id, int file, const std::vector<int>& sources,
                     const SourceTable& table) {
  ConvertUnit u;
  u.id = std::move(id);
  u.file = file;
  u.sources = sources;
  for (int s : sources) {
    const SourceTensor& t = table.tensors[static_cast<size_t>(s)];
    u.shards.push_back(t.shard);
    u.sourceBytes += t.bytes;
    if (t.scale >= 0) {
      const SourceTensor& scale = table.tensors[static_cast<size_t>(t.scale)];
      u.shards.push_back(scale.shard);
      u.sourceBytes += scale.bytes;
    }
  }
  std::sort(u.shards.begin(), u.shards.end());
  u.shards.erase(std::unique(u.shards.begin(), u.shards.end()), u.shards.end());
  return u;
}

}  // namespace

bool naturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) &&
        std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      const std::string x = a.substr(i, ie - i), y = b.substr(j, je - j);
      if (x.size() != y.size()) return x.size() < y.size();  // no leading zeros in HF names
      if (x != y) return x < y;
      i = ie, j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

ContainerPlan planContainer(const SourceTable& table, const model::ModelConfig& config,
                            const Policy& policy) {
  ContainerPlan plan;
  plan.identity = {table.fingerprint(), policy.toJson(), kConverterName};
  const int mtpLayer = config.numHiddenLayers;

  std::vector<int> resident;
  std::map<int, ExpertSlots> experts;  // layer -> experts
  bool mtpPresent = false;
  for (size_t i = 0; i < table.tensors.size(); ++i) {
    const SourceTensor& t = table.tensors[i];
    if (isScale(t.name)) continue;  // converted with its weight
    const TensorName n = classifyTensor(t.name);
    mtpPresent = mtpPresent || n.layer == mtpLayer;
    if (n.layer > mtpLayer || (n.layer == mtpLayer && !config.hasMtp()))
      throw Error("tensor " + inQuotes(t.name) + ": layer " + std::to_string(n.layer) +
                  " does not exist (config.json has num_hidden_layers " +
                  std::to_string(config.numHiddenLayers) + ", num_nextn_predict_layers " +
                  std::to_string(config.numNextnPredictLayers) + ")");
    if (n.role != TensorRole::RoutedExpert) {
      resident.push_back(static_cast<int>(i));
      continue;
    }
    if (n.layer < mtpLayer && !config.layerIsMoe[static_cast<size_t>(n.layer)])
      throw Error("tensor " + inQuotes(t.name) + ": layer " + std::to_string(n.layer) +
                  " is dense in config.json but holds routed experts");
    auto slot = experts[n.layer].try_emplace(n.expert, std::array<int, 3>{-1, -1, -1}).first;
    slot->second[static_cast<size_t>(n.projection)] = static_cast<int>(i);
  }
  for (int layer = 0; layer < mtpLayer; ++layer)
    if (config.layerIsMoe[static_cast<size_t>(layer)]) experts[layer];  // must be complete
  if (mtpPresent) experts[mtpLayer];
  for (const auto& [layer, slots] : experts) checkLayerExperts(layer, slots, table, config);

  // The resident file, in natural name order.
  std::sort(resident.begin(), resident.end(), [&](int a, int b) {
    return naturalLess(table.tensors[static_cast<size_t>(a)].name,
                       table.tensors[static_cast<size_t>(b)].name);
  });
  io::ContainerFile residentFile;
  residentFile.name = io::kResidentFileName;
  residentFile.role = io::FileRole::Resident;
  for (int s : resident) {
    const SourceTensor& t = table.tensors[static_cast<size_t>(s)];
    const TensorName n = classifyTensor(t.name);
    const QuantChoice c = chooseFormat(policy, n, n.layer == mtpLayer, t.dtype, t.shape);
    residentFile.tensors.push_back(io::TensorEntry::make(t.name, t.shape, c.format, c.groupSize));
    plan.units.push_back(makeUnit(t.name, 0, {s}, table));
    plan.units.back().tensor = static_cast<int>(residentFile.tensors.size()) - 1;
  }
  plan.files.push_back(std::move(residentFile));

  // One experts file per MoE layer: expert-major, gate/up/down adjacent.
  for (const auto& [layer, slots] : experts) {
    io::ContainerFile file;
    file.name = io::expertFileName(layer);
    file.role = io::FileRole::Experts;
    file.layer = layer;
    const int fileIndex = static_cast<int>(plan.files.size());
    for (const auto& [expert, sources] : slots) {
      io::ExpertEntry entry;
      entry.expert = expert;
      for (int p = 0; p < 3; ++p) {
        const SourceTensor& t = table.tensors[static_cast<size_t>(sources[p])];
        const TensorName n = classifyTensor(t.name);
        const QuantChoice c = chooseFormat(policy, n, layer == mtpLayer, t.dtype, t.shape);
        if (!io::isInteger(c.format))
          throw Error("tensor " + inQuotes(t.name) + ": routed experts must be stored int8/int4");
        entry.tensors[p] = static_cast<int>(file.tensors.size());
        file.tensors.push_back(io::TensorEntry::make(t.name, t.shape, c.format, c.groupSize));
      }
      file.experts.push_back(entry);
      plan.units.push_back(
          makeUnit("layer " + std::to_string(layer) + " expert " + std::to_string(expert),
                   fileIndex, {sources[0], sources[1], sources[2]}, table));
      plan.units.back().expert = static_cast<int>(file.experts.size()) - 1;
    }
    plan.files.push_back(std::move(file));
  }

  for (io::ContainerFile& file : plan.files) io::layoutFile(file, plan.identity);
  // Shard by shard, so --delete-input frees each shard as early as possible.
  std::stable_sort(plan.units.begin(), plan.units.end(),
                   [](const ConvertUnit& a, const ConvertUnit& b) {
                     return a.shards.front() < b.shards.front();
                   });
  for (const ConvertUnit& u : plan.units) plan.sourceBytes += u.sourceBytes;
  return plan;
}

}  // namespace strata::convert
