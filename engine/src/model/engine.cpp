// The public Engine and Session, wired to the model internals.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>

#include "core/logging.h"
#include "io/container.h"
#include "io/safetensors.h"
#include "model/config.h"
#include "model/fingerprint.h"
#include "model/routing_recorder.h"
#include "model/session.h"
#include "model/transformer.h"
#include "model/weights.h"
#include "strata/engine.h"
#include "tier/expert_store.h"
#include "tier/memory_plan.h"
#include "tier/usage_history.h"

namespace strata {
namespace {

using model::Transformer;

// The main model's MoE layers (the MTP layer's routing is a draft's, not the reply's).
std::vector<int> moeLayers(const model::ModelConfig& c) {
  std::vector<int> layers;
  for (int i = 0; i < c.numHiddenLayers; ++i)
    if (c.layerIsMoe[static_cast<size_t>(i)]) layers.push_back(i);
  return layers;
}

model::ForwardOptions forwardOptions(const EngineSettings& s) {
  model::ForwardOptions o;
  o.denseAttention = s.denseAttention;
  switch (s.attentionForm) {
    case AttentionForm::Automatic: o.mlaForm = model::MlaForm::Automatic; break;
    case AttentionForm::Expanded: o.mlaForm = model::MlaForm::Expanded; break;
    case AttentionForm::Absorbed: o.mlaForm = model::MlaForm::Absorbed; break;
  }
  return o;
}

kernels::KernelConfig kernelConfig(KernelPath path) {
  using kernels::IntKernelPath;
  switch (path) {
    case KernelPath::Dequantize: return {};
    case KernelPath::Automatic: return {true, kernels::intKernels(kernels::bestIntPath())};
    case KernelPath::Scalar: return {true, kernels::intKernels(IntKernelPath::Scalar)};
    case KernelPath::Avx2: return {true, kernels::intKernels(IntKernelPath::Avx2)};
    case KernelPath::AvxVnni: return {true, kernels::intKernels(IntKernelPath::AvxVnni)};
    case KernelPath::Avx512Vnni: return {true, kernels::intKernels(IntKernelPath::Avx512Vnni)};
    case KernelPath::Avx512Vnni256: return {true, kernels::intKernels(IntKernelPath::Avx512Vnni256)};
    case KernelPath::NeonDot: return {true, kernels::intKernels(IntKernelPath::NeonDot)};
  }
  return {};
}

model::WeightPrecision weightPrecision(const EngineSettings& s) {
  return s.precision == Precision::Native ? model::WeightPrecision::Native
                                          : model::WeightPrecision::F32;
}

// A Hugging Face checkpoint cannot stream: everything is resident (tier/memory_plan.h).
MemoryPlan checkpointPlan(const io::TensorStore& store, const model::ModelConfig& config,
                          const EngineSettings& settings) {
  return tier::planCheckpointMemory(config, store, weightPrecision(settings), settings.kvPrecision,
                                    settings.memory);
}

tier::StoreSettings storeSettings(const MemoryPlan& plan, const MemorySettings& m) {
  tier::StoreSettings s;
  s.cacheBytes = plan.cacheBytes;
  s.pinnedBytes = plan.pinnedBytes;
  s.io = m.io;
  s.prefetch = m.prefetch;
  s.pageCache = m.pageCache;
  s.ioDepth = m.ioDepth;
  s.policy = tier::defaultCachePolicy();
  if (!m.cachePolicy.empty()) {
    const auto policy = tier::parseCachePolicy(m.cachePolicy);
    if (!policy) {
      std::string names;
      for (tier::CachePolicyKind kind : tier::allCachePolicies())
        names += (names.empty() ? "" : ", ") + std::string(tier::cachePolicyName(kind));
      throw Error("unknown cache policy '" + m.cachePolicy + "' (" + names + ")");
    }
    s.policy = *policy;
  }
  if (m.pageCache && m.io != IoBackend::Buffered)
    throw Error("the page cache tier needs buffered I/O (direct I/O and io_uring bypass it)");
  return s;
}

// 0 is "every core"; a negative count is a mistake, not a default.
int checkedThreads(int threads) {
  if (threads < 0)
    throw Error("threads must be 0 (every core) or a positive count, not " + std::to_string(threads));
  return threads;
}

class EngineImpl final : public Engine {
 public:
  EngineImpl(const std::filesystem::path& dir, const EngineSettings& settings)
      : settings_(settings), config_(model::loadModelConfig(dir / "config.json")),
        threads_(checkedThreads(settings.threads)),
        speculation_(settings.speculation) {
    model::useThreads(settings.threads);
    const auto precision = weightPrecision(settings);
    // A Strata container or a Hugging Face checkpoint, opened (headers validated) once: the
    // plan, the fingerprint and the weights all come from it.
    std::optional<io::Container> container;
    std::optional<io::TensorStore> checkpoint;
    if (io::Container::isContainer(dir)) container = io::Container::open(dir);
    else checkpoint = io::TensorStore::openDirectory(dir);
    info_.fingerprint = container ? model::modelFingerprint(*container)
                                  : model::modelFingerprint(dir, *checkpoint);
    // Plan before loading anything: a budget that cannot work fails in a second, not after
    // minutes of reading weights.
    info_.plan = container ? tier::planMemory(config_, &*container, precision,
                                              settings.kvPrecision, settings.memory)
                           : checkpointPlan(*checkpoint, config_, settings);
    {
      const auto source = container ? model::containerWeightSource(*container)
                                    : model::checkpointWeightSource(*checkpoint, config_);
      weights_ = model::loadModelWeights(config_, *source, precision);
      if (!info_.plan.streaming) experts_ = model::loadResidentExperts(config_, *source, precision);
    }
    if (info_.plan.streaming) {
      tier::UsageCounts history = loadHistory(*container);
      auto store = std::make_unique<tier::ExpertStore>(std::move(*container),
                                                      storeSettings(info_.plan, settings.memory),
                                                      std::move(history));
      store_ = store.get();
      experts_ = std::move(store);
    }
    transformer_ = std::make_unique<Transformer>(config_, weights_, *experts_,
                                                 forwardOptions(settings),
                                                 kernelConfig(settings.kernelPath));
    routing_ = std::make_unique<model::RoutingRecorder>(moeLayers(config_), config_.nRoutedExperts,
                                                        config_.numExpertsPerTok);
    transformer_->setRoutingRecorder(routing_.get());

    info_.directory = dir;
    info_.vocabSize = config_.vocabSize;
    info_.hiddenSize = config_.hiddenSize;
    info_.layerCount = config_.numHiddenLayers;
    info_.hasMtp = config_.hasMtp();
    info_.eosTokenIds = config_.eosTokenIds;
    // Streamed experts come and go (tierSnapshot() shows them); resident ones are counted.
    info_.residentBytes = model::residentBytes(weights_) + (store_ ? 0 : experts_->residentBytes());
    if (std::filesystem::exists(dir / "tokenizer.json"))
      tokenizer_ = Tokenizer::load(dir / "tokenizer.json");
    prefixes_ = std::make_unique<model::PrefixCache>(settings.memory.sharedPrefixTokens);
    const bool batch = settings.batchSessions == SessionBatching::On ||
                       (settings.batchSessions == SessionBatching::Auto && store_);
    if (batch) batcher_ = std::make_unique<model::StepBatcher>(*transformer_);
    // Under a memory budget the KV cache is part of the plan: a session may not outgrow it.
    sessions_.reset(new model::SessionEnvironment{
        *transformer_, tokenizer_.get(), threads_,
        info_.plan.streaming ? settings.memory.contextTokens : 0, info_.fingerprint,
        settings.kvPrecision, prefixes_.get(), batcher_.get(), &speculation_,
        [this] { return grammarVocabulary(); }});
    log().debug("opened {}: {} layers, vocabulary {}, MTP {}, {:.1f} MiB of weights in memory",
               dir.string(), config_.numHiddenLayers, config_.vocabSize,
               config_.hasMtp() ? "yes" : "no", info_.residentBytes / 1048576.0);
  }

  const ModelInfo& info() const override { return info_; }
  const Tokenizer* tokenizer() const override { return tokenizer_.get(); }

  ~EngineImpl() override {
    if (!store_ || historyPath_.empty()) return;
    try {
      tier::saveUsageHistory(historyPath_, store_->layers(), store_->expertsPerLayer(), store_->usage());
    } catch (const std::exception& e) {
      log().warn("could not save the expert usage history: {}", e.what());
    }
  }

  std::unique_ptr<Session> newSession() override {
    return std::make_unique<model::SessionImpl>(*sessions_);
  }

  std::unique_ptr<Session> resumeSession(const std::filesystem::path& file) override {
    const kv::KvFileHeader expected = sessions_->kvFileHeader();
    kv::KvFileState state = kv::readKvFile(file, info_.fingerprint, &expected);
    if (sessions_->maxTokens > 0 && static_cast<int64_t>(state.tokens.size()) > sessions_->maxTokens)
      throw Error(file.string() + ": the saved conversation has " + std::to_string(state.tokens.size()) +
                  " tokens, more than the memory plan's context of " + std::to_string(sessions_->maxTokens));
    return std::make_unique<model::SessionImpl>(*sessions_, std::move(state));
  }

  TierSnapshot tierSnapshot() const override {
    TierSnapshot snap;
    if (store_) {
      snap = store_->snapshot();
    } else {  // every expert resident: the router's heat, all in RAM
      RoutingSnapshot routing = routing_->snapshot(model::RoutingRecorder::Trail::Omit);
      snap.layers = std::move(routing.layers);
      snap.expertsPerLayer = routing.expertsPerLayer;
      snap.heat = std::move(routing.heat);
      snap.tiers.assign(snap.heat.size(), ExpertTier::Ram);
      snap.counters.steps = routing.steps;
    }
    snap.residentBytes = info_.residentBytes;  // with every expert when they are all resident
    return snap;
  }

  RoutingSnapshot routingSnapshot() const override { return routing_->snapshot(); }
  RoutingSnapshot routingSnapshot(const Session& session) const override {
    const auto* own = dynamic_cast<const model::SessionImpl*>(&session);
    if (!own) throw Error("routingSnapshot: not a session of this engine");
    return routing_->snapshot(model::RoutingRecorder::Trail::Include, own->routingKey());
  }

  void retune(const TierTuning& tuning) override {
    if (store_) store_->retune(tuning);
  }

  void setThreads(int threads) override { threads_.store(checkedThreads(threads)); }

  std::vector<DrafterStats> speculationStats() const override {
    std::vector<DrafterStats> stats = speculation_.stats();
    if (!config_.hasMtp()) std::erase_if(stats, [](const DrafterStats& s) { return s.name == "mtp"; });
    return stats;
  }
  void setSpeculation(const SpeculationSettings& settings) override {
    speculation_.setSettings(settings);
  }

  BatchingStats batchingStats() const override { return batcher_ ? batcher_->stats() : BatchingStats{}; }

  void observeRouting(std::function<void(int64_t, int, std::span<const int>)> observer) override {
    if (!store_) throw Error("routing is observed on streaming models only (a container opened with a memory budget)");
    store_->setTraceSink(std::move(observer));
  }

 private:
  // Built on the first constrained generation (a pass over the whole vocabulary).
  std::shared_ptr<const GrammarVocabulary> grammarVocabulary() {
    if (!tokenizer_) return nullptr;
    std::lock_guard lock(grammarMutex_);
    if (!grammarVocabulary_) {
      const std::vector<int32_t> ends(config_.eosTokenIds.begin(), config_.eosTokenIds.end());
      grammarVocabulary_ = GrammarVocabulary::build(*tokenizer_, ends);
    }
    return grammarVocabulary_;
  }

  // The usage history of this model in the user's data folder (empty without one).
  tier::UsageCounts loadHistory(const io::Container& c) {
    const std::filesystem::path& data = settings_.memory.dataDirectory;
    if (data.empty()) return {};
    historyPath_ = tier::usageHistoryPath(data, info_.fingerprint);
    const std::vector<int>& layers = c.expertLayers();
    return tier::loadUsageHistory(historyPath_, layers, c.expertCount(layers.front()));
  }

  EngineSettings settings_;
  model::ModelConfig config_;
  model::ModelWeights weights_;
  std::unique_ptr<model::ExpertSource> experts_;
  tier::ExpertStore* store_ = nullptr;  // experts_ when streaming
  std::filesystem::path historyPath_;
  std::atomic<int> threads_;
  std::unique_ptr<Transformer> transformer_;
  std::unique_ptr<model::RoutingRecorder> routing_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<model::PrefixCache> prefixes_;
  std::unique_ptr<model::StepBatcher> batcher_;
  spec::SpeculationTuner speculation_;
  std::mutex grammarMutex_;
  std::shared_ptr<const GrammarVocabulary> grammarVocabulary_;
  std::unique_ptr<model::SessionEnvironment> sessions_;
  ModelInfo info_;
};

}  // namespace

std::unique_ptr<Engine> Engine::open(const std::filesystem::path& modelDir,
                                     const EngineSettings& settings) {
  if (!std::filesystem::is_directory(modelDir))
    throw Error(modelDir.string() + ": not a model directory (expected config.json and safetensors files)");
  return std::make_unique<EngineImpl>(modelDir, settings);
}

MemoryPlan Engine::plan(const std::filesystem::path& modelDir, const EngineSettings& settings) {
  if (!std::filesystem::is_directory(modelDir))
    throw Error(modelDir.string() + ": not a model directory (expected config.json and safetensors files)");
  const model::ModelConfig config = model::loadModelConfig(modelDir / "config.json");
  if (!io::Container::isContainer(modelDir))
    return checkpointPlan(io::TensorStore::openDirectory(modelDir), config, settings);
  const io::Container container = io::Container::open(modelDir);
  return tier::planMemory(config, &container, weightPrecision(settings), settings.kvPrecision,
                          settings.memory);
}

int32_t argmax(std::span<const float> logits) {
  if (logits.empty()) return 0;
  // The largest value in independent lanes, then its first index: a running index made every
  // step wait on the load of the last best (~10 cycles a value, 120 us for a 32,000-token
  // vocabulary). As a `>` scan from the first value: NaNs never win, ties go to the first.
  constexpr size_t kLanes = 8;
  float lanes[kLanes];
  std::fill(lanes, lanes + kLanes, logits[0]);
  size_t i = 0;
  for (; i + kLanes <= logits.size(); i += kLanes)
    for (size_t l = 0; l < kLanes; ++l)
      lanes[l] = logits[i + l] > lanes[l] ? logits[i + l] : lanes[l];
  float best = logits[0];
  for (; i < logits.size(); ++i) best = logits[i] > best ? logits[i] : best;
  for (const float v : lanes) best = v > best ? v : best;
  for (size_t j = 0; j < logits.size(); ++j)
    if (logits[j] == best) return static_cast<int32_t>(j);
  return 0;  // the first value is a NaN, which nothing is larger than
}

}  // namespace strata
