#include "tier/memory_plan.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/text.h"
#include "io/safetensors.h"
#include "strata/error.h"

namespace strata::tier {
namespace {

bool endsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Tensors model/weights.cpp holds in f32 whatever their stored type (norms, indexer
// weights_proj).
bool heldAsF32(const std::string& name) {
  return endsWith(name, "weights_proj.weight") || endsWith(name, "e_score_correction_bias") ||
         endsWith(name, "norm.weight") || endsWith(name, "norm.bias");
}

// Bytes of `count` unquantized values as model/weights.cpp holds them: f32, except BF16 kept
// 16-bit under native precision when the tensor is not one it always widens (kv_b is widened
// unless quantized).
int64_t floatBytes(const std::string& name, int64_t count, bool bf16, model::WeightPrecision precision) {
  const bool widened = heldAsF32(name) || endsWith(name, "kv_b_proj.weight");
  return count * (bf16 && precision == model::WeightPrecision::Native && !widened ? 2 : 4);
}

int64_t elements(const io::TensorEntry& e) {
  int64_t n = 1;
  for (int64_t d : e.shape) n *= d;
  return n;
}

int64_t heldBytes(const io::TensorEntry& e, model::WeightPrecision precision) {
  if (heldAsF32(e.name)) return elements(e) * 4;  // widened whatever its format
  switch (e.format) {
    case io::QuantFormat::F32:
    case io::QuantFormat::BF16: return floatBytes(e.name, elements(e), e.format == io::QuantFormat::BF16, precision);
    case io::QuantFormat::Int8:
    case io::QuantFormat::Int4: return static_cast<int64_t>(e.dataBytes() + e.scalesBytes());
  }
  return 0;
}

// "X of KV cache (N sessions x T tokens)", for the messages refusing a budget.
std::string kvCacheText(const MemoryPlan& plan, const MemorySettings& s) {
  return bytesText(plan.kvBytes) + " of KV cache (" +
         (s.sessions > 1 ? std::to_string(s.sessions) + " sessions x " : std::string()) +
         std::to_string(s.contextTokens) + " tokens)";
}

// Activations of a prefill step (kPrefillChunkTokens) and the I/O threads' read buffers: an
// estimate, checked against measured peak RSS by the tests and bench decode. Attention's
// queries and outputs are counted apart: many wide heads on a narrow model (64 x 512 floats
// a token on a 512-wide one) outgrow the hidden-size term.
int64_t scratchBytes(const model::ModelConfig& c, int64_t expertSpan, int ioDepth) {
  const int64_t attention = int64_t{c.numAttentionHeads} * (c.qkHeadDim() + c.vHeadDim);
  const int64_t activations =
      kPrefillChunkTokens * (int64_t{c.hiddenSize} * 16 + c.vocabSize + attention) * 4;
  return activations + int64_t{std::max(1, ioDepth)} * expertSpan + (int64_t{32} << 20);
}

// The main layer index of a "model.layers.N." tensor, or -1.
int layerOf(const std::string& name) {
  constexpr std::string_view prefix = "model.layers.";
  if (name.rfind(prefix, 0) != 0) return -1;
  return std::atoi(name.c_str() + prefix.size());
}

void addPerTokenBytes(const model::ModelConfig& c, const io::Container& container,
                      model::WeightPrecision precision, MemoryPlan& plan) {
  const bool headIsEmbedding = c.tieWordEmbeddings && !container.find("lm_head.weight");
  for (const io::ContainerTensor& t : container.tensors()) {
    if (t.expert >= 0 || layerOf(t.name()) >= c.numHiddenLayers) continue;
    if (t.name() == "model.embed_tokens.weight" && !headIsEmbedding) continue;
    plan.denseBytesPerToken += heldBytes(t.entry, precision);
  }
  int moeLayers = 0;
  for (int layer : container.expertLayers()) moeLayers += layer < c.numHiddenLayers;
  plan.expertBytesPerToken = int64_t{moeLayers} * c.numExpertsPerTok * plan.expertBytes;
}

}  // namespace

namespace {

// The resident tensors' held bytes. The embedding table stays on disk (model/embedding_table.h);
// with tied embeddings and no lm_head tensor, the head is a copy of it in memory.
int64_t heldResidentBytes(const model::ModelConfig& config,
                          const std::vector<const io::TensorEntry*>& resident,
                          model::WeightPrecision precision) {
  int64_t total = 0;
  const io::TensorEntry* embed = nullptr;
  bool head = false;
  for (const io::TensorEntry* e : resident) {
    head = head || e->name == "lm_head.weight";
    if (e->name == "model.embed_tokens.weight")
      embed = e;
    else
      total += heldBytes(*e, precision);
  }
  if (config.tieWordEmbeddings && !head && embed) total += heldBytes(*embed, precision);
  return total;
}

}  // namespace

int64_t residentTensorBytes(const model::ModelConfig& config, const io::Container& container,
                            model::WeightPrecision precision) {
  std::vector<const io::TensorEntry*> resident;
  for (const io::ContainerTensor& t : container.tensors())
    if (t.expert < 0) resident.push_back(&t.entry);
  return heldResidentBytes(config, resident, precision);
}

int64_t residentTensorBytes(const model::ModelConfig& config,
                            std::span<const io::ContainerFile> files,
                            model::WeightPrecision precision) {
  std::vector<const io::TensorEntry*> resident;
  for (const io::ContainerFile& f : files)
    if (f.role != io::FileRole::Experts)
      for (const io::TensorEntry& e : f.tensors) resident.push_back(&e);
  return heldResidentBytes(config, resident, precision);
}

MemoryPlan planMemory(const model::ModelConfig& c, const io::Container* container,
                      model::WeightPrecision precision, KvPrecision kvPrecision,
                      const MemorySettings& s) {
  MemoryPlan plan;
  plan.budgetBytes = s.budgetBytes;
  const int64_t valueBytes = kvPrecision == KvPrecision::F32 ? 4 : 2;
  plan.kvBytesPerToken = c.kvValuesPerToken() * valueBytes;
  if (s.sessions < 1) throw Error("memory plan: sessions must be at least 1, not " + std::to_string(s.sessions));
  plan.kvBytes = plan.kvBytesPerToken * (int64_t{s.sessions} * std::max<int64_t>(0, s.contextTokens) +
                                        std::max<int64_t>(0, s.sharedPrefixTokens));
  if (!container || s.budgetBytes <= 0) {
    // Everything in memory (no budget, or a Hugging Face checkpoint that cannot stream).
    plan.scratchBytes = scratchBytes(c, 0, 0);
    if (container) {
      plan.residentBytes = residentTensorBytes(c, *container, precision);
      for (int layer : container->expertLayers())
        for (int e = 0; e < container->expertCount(layer); ++e) {
          plan.expertBytes = static_cast<int64_t>(container->expert(layer, e).bytes);
          plan.cacheBytes += plan.expertBytes;
          ++plan.expertCount;
        }
      addPerTokenBytes(c, *container, precision, plan);
    }
    return plan;
  }

  plan.streaming = true;
  plan.residentBytes = residentTensorBytes(c, *container, precision);
  int64_t span = 0;
  for (int layer : container->expertLayers())
    for (int e = 0; e < container->expertCount(layer); ++e) {
      const io::ExpertLocation& loc = container->expert(layer, e);
      plan.expertBytes = std::max<int64_t>(plan.expertBytes, static_cast<int64_t>(loc.bytes));
      span = std::max<int64_t>(span, static_cast<int64_t>(loc.span));
      ++plan.expertCount;
    }
  plan.scratchBytes = scratchBytes(c, span, s.ioDepth);
  addPerTokenBytes(c, *container, precision, plan);
  // One layer's experts for this step (every session's rows when they are batched) plus the
  // next layer's prefetched ones.
  const int64_t perLayer = c.nRoutedExperts > 0 ? c.nRoutedExperts : c.numExpertsPerTok;
  plan.minimumExpertBytes =
      2 * std::min<int64_t>(int64_t{c.numExpertsPerTok} * s.sessions, perLayer) * plan.expertBytes;
  const int64_t fixed = plan.residentBytes + plan.kvBytes + plan.scratchBytes;
  const int64_t available = s.budgetBytes - fixed;
  if (available < plan.minimumExpertBytes)
    throw Error("the memory budget of " + bytesText(s.budgetBytes) + " is too small for this model: it needs " +
                bytesText(plan.residentBytes) + " of resident weights + " + kvCacheText(plan, s) + " + " +
                bytesText(plan.scratchBytes) +
                " of scratch + at least " + bytesText(plan.minimumExpertBytes) + " for experts = " +
                bytesText(fixed + plan.minimumExpertBytes) + "; raise the budget or shorten the context");
  const int64_t allExperts = plan.expertBytes * plan.expertCount;
  if (available >= allExperts) {
    // Everything fits: pin every expert (read once at start, never evicted); no cache needed.
    plan.pinnedBytes = allExperts;
    plan.cacheBytes = (available - allExperts) / plan.expertBytes * plan.expertBytes;
    return plan;
  }
  const int64_t experts = available;
  const double fraction = std::clamp(s.pinnedFraction, 0.0, 1.0);
  // Whole experts only; the cache keeps at least the minimum.
  plan.pinnedBytes = static_cast<int64_t>(experts * fraction) / plan.expertBytes * plan.expertBytes;
  plan.pinnedBytes = std::min(plan.pinnedBytes, experts - plan.minimumExpertBytes);
  plan.pinnedBytes = std::max<int64_t>(0, plan.pinnedBytes / plan.expertBytes * plan.expertBytes);
  plan.cacheBytes = (experts - plan.pinnedBytes) / plan.expertBytes * plan.expertBytes;
  return plan;
}

MemoryPlan planCheckpointMemory(const model::ModelConfig& c, const io::TensorStore& store,
                                model::WeightPrecision precision, KvPrecision kvPrecision,
                                const MemorySettings& s) {
  MemoryPlan plan = planMemory(c, nullptr, precision, kvPrecision, s);
  for (const std::string& name : store.names()) {
    if (name.ends_with("_scale_inv")) continue;  // FP8 scales are folded into the weights
    const io::TensorInfo& t = store.get(name);
    plan.residentBytes += floatBytes(name, t.elementCount(), t.dtype == io::DType::BF16, precision);
  }
  const int64_t total = plan.residentBytes + plan.kvBytes + plan.scratchBytes;
  if (s.budgetBytes > 0 && total > s.budgetBytes)
    throw Error("the memory budget of " + bytesText(s.budgetBytes) + " is too small for this model: a " +
                "Hugging Face checkpoint is held in memory whole, " + bytesText(plan.residentBytes) +
                " of weights + " + kvCacheText(plan, s) + " + " + bytesText(plan.scratchBytes) +
                " of scratch = " + bytesText(total) + "; raise the budget, shorten the context, or " +
                "convert it (strata-cli convert) so its experts stream from disk");
  return plan;
}

}  // namespace strata::tier
