// The public Engine and Session, wired to the model internals.
#include <omp.h>

#include <algorithm>

#include "core/logging.h"
#include "io/safetensors.h"
#include "model/config.h"
#include "model/transformer.h"
#include "model/weights.h"
#include "strata/engine.h"

namespace strata {
namespace {

using model::Transformer;

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
    case KernelPath::Avx512Vnni: return {true, kernels::intKernels(IntKernelPath::Avx512Vnni)};
  }
  return {};
}

// OpenMP's thread count is per calling thread, so each entry point sets it for its own work.
class ThreadScope {
 public:
  explicit ThreadScope(int threads) {
    if (threads > 0) omp_set_num_threads(threads);
  }
};

class SessionImpl final : public Session {
 public:
  SessionImpl(const Transformer& transformer, int threads)
      : transformer_(transformer),
        threads_(threads),
        cache_(transformer.newCache()),
        mtpCache_(transformer.newMtpCache()) {}

  StepResult append(std::span<const int32_t> tokens) override {
    ThreadScope scope(threads_);
    StepResult r;
    if (tokens.empty()) return r;
    r.hidden = transformer_.forward(tokens, cache_);
    r.logits = transformer_.logits(r.hidden.data(), static_cast<int64_t>(tokens.size()));
    return r;
  }

  std::vector<float> appendMtp(std::span<const float> hidden,
                               std::span<const int32_t> nextTokens) override {
    ThreadScope scope(threads_);
    const size_t width = static_cast<size_t>(transformer_.config().hiddenSize);
    if (hidden.size() != nextTokens.size() * width)
      throw Error("appendMtp: " + std::to_string(nextTokens.size()) + " tokens need " +
                  std::to_string(nextTokens.size() * width) + " hidden values, got " +
                  std::to_string(hidden.size()));
    if (nextTokens.empty()) return {};
    std::vector<float> z = transformer_.mtpForward(hidden.data(), nextTokens, mtpCache_);
    return transformer_.logits(z.data(), static_cast<int64_t>(nextTokens.size()));
  }

  std::vector<int32_t> generateGreedy(std::span<const int32_t> prompt, int maxNew,
                                      const std::function<void(int32_t)>& onToken) override {
    std::vector<int32_t> produced;
    if (maxNew <= 0) return produced;
    const std::vector<int>& eos = transformer_.config().eosTokenIds;
    const int vocab = transformer_.config().vocabSize;
    StepResult step = append(prompt);
    if (step.logits.empty()) throw Error("generate: the prompt is empty");
    while (true) {
      const std::span<const float> last(step.logits.data() + step.logits.size() - vocab,
                                        static_cast<size_t>(vocab));
      const int32_t next = argmax(last);
      produced.push_back(next);
      if (onToken) onToken(next);
      if (static_cast<int>(produced.size()) >= maxNew ||
          std::find(eos.begin(), eos.end(), next) != eos.end())
        break;
      step = append(std::span<const int32_t>(&next, 1));
    }
    return produced;
  }

  int64_t length() const override { return cache_.length(); }
  int64_t mtpLength() const override { return mtpCache_.length(); }
  void truncate(int64_t tokens) override {
    cache_.truncate(tokens);
    mtpCache_.truncate(tokens);
  }
  int64_t kvBytes() const override { return cache_.bytes() + mtpCache_.bytes(); }

 private:
  const Transformer& transformer_;
  int threads_;
  kv::KvCache cache_;
  kv::KvCache mtpCache_;
};

class EngineImpl final : public Engine {
 public:
  EngineImpl(const std::filesystem::path& dir, const EngineSettings& settings)
      : settings_(settings), config_(model::loadModelConfig(dir / "config.json")) {
    ThreadScope scope(settings.threads);
    const io::TensorStore store = io::TensorStore::openDirectory(dir);
    const auto precision = settings.precision == Precision::Native ? model::WeightPrecision::Native
                                                                   : model::WeightPrecision::F32;
    weights_ = model::loadModelWeights(config_, store, precision);
    experts_ = model::loadResidentExperts(config_, store, precision);
    transformer_ = std::make_unique<Transformer>(config_, weights_, *experts_,
                                                 forwardOptions(settings),
                                                 kernelConfig(settings.kernelPath));

    info_.directory = dir;
    info_.vocabSize = config_.vocabSize;
    info_.hiddenSize = config_.hiddenSize;
    info_.layerCount = config_.numHiddenLayers;
    info_.hasMtp = config_.hasMtp();
    info_.eosTokenIds = config_.eosTokenIds;
    info_.residentBytes = model::residentBytes(weights_) + experts_->residentBytes();
    log().debug("opened {}: {} layers, vocabulary {}, MTP {}, {:.1f} MiB of weights in memory",
               dir.string(), config_.numHiddenLayers, config_.vocabSize,
               config_.hasMtp() ? "yes" : "no", info_.residentBytes / 1048576.0);
  }

  const ModelInfo& info() const override { return info_; }

  std::unique_ptr<Session> newSession() override {
    return std::make_unique<SessionImpl>(*transformer_, settings_.threads);
  }

 private:
  EngineSettings settings_;
  model::ModelConfig config_;
  model::ModelWeights weights_;
  std::unique_ptr<model::ExpertSource> experts_;
  std::unique_ptr<Transformer> transformer_;
  ModelInfo info_;
};

}  // namespace

std::unique_ptr<Engine> Engine::open(const std::filesystem::path& modelDir,
                                     const EngineSettings& settings) {
  if (!std::filesystem::is_directory(modelDir))
    throw Error(modelDir.string() + ": not a model directory (expected config.json and safetensors files)");
  return std::make_unique<EngineImpl>(modelDir, settings);
}

int32_t argmax(std::span<const float> logits) {
  int32_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i)
    if (logits[i] > logits[best]) best = static_cast<int32_t>(i);
  return best;
}

}  // namespace strata
