// The public Engine and Session, wired to the model internals.
#include <algorithm>

#include "core/logging.h"
#include "io/safetensors.h"
#include "model/config.h"
#include "model/session.h"
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

class EngineImpl final : public Engine {
 public:
  EngineImpl(const std::filesystem::path& dir, const EngineSettings& settings)
      : settings_(settings), config_(model::loadModelConfig(dir / "config.json")) {
    model::useThreads(settings.threads);
    // A Hugging Face checkpoint or a Strata container (model/weight_source.h).
    const auto source = model::openWeightSource(dir, config_);
    const auto precision = settings.precision == Precision::Native ? model::WeightPrecision::Native
                                                                   : model::WeightPrecision::F32;
    weights_ = model::loadModelWeights(config_, *source, precision);
    experts_ = model::loadResidentExperts(config_, *source, precision);
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
    if (std::filesystem::exists(dir / "tokenizer.json"))
      tokenizer_ = Tokenizer::load(dir / "tokenizer.json");
    log().debug("opened {}: {} layers, vocabulary {}, MTP {}, {:.1f} MiB of weights in memory",
               dir.string(), config_.numHiddenLayers, config_.vocabSize,
               config_.hasMtp() ? "yes" : "no", info_.residentBytes / 1048576.0);
  }

  const ModelInfo& info() const override { return info_; }
  const Tokenizer* tokenizer() const override { return tokenizer_.get(); }

  std::unique_ptr<Session> newSession() override {
    return std::make_unique<model::SessionImpl>(*transformer_, tokenizer_.get(), settings_.threads);
  }

 private:
  EngineSettings settings_;
  model::ModelConfig config_;
  model::ModelWeights weights_;
  std::unique_ptr<model::ExpertSource> experts_;
  std::unique_ptr<Transformer> transformer_;
  std::unique_ptr<Tokenizer> tokenizer_;
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
