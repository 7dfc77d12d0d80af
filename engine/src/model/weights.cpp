#include "model/weights.h"

#include <string>

namespace strata::model {
namespace {

// Reads tensors by name with the shapes the config implies.
class WeightLoader {
 public:
  WeightLoader(const ModelConfig& config, const WeightSource& source, WeightPrecision precision)
      : config_(config), source_(source), precision_(precision) {}

  Matrix matrix(const std::string& name, int64_t rows, int64_t cols) const {
    return source_.matrix(name, rows, cols, precision_);
  }

  Matrix f32Matrix(const std::string& name, int64_t rows, int64_t cols) const {
    return source_.f32Matrix(name, rows, cols);
  }

  Vector vector(const std::string& name, int64_t size) const { return source_.vector(name, size); }

  FeedForwardWeights feedForward(const std::string& prefix, int64_t width) const {
    const int64_t hidden = config_.hiddenSize;
    return {matrix(prefix + "gate_proj.weight", width, hidden),
            matrix(prefix + "up_proj.weight", width, hidden),
            matrix(prefix + "down_proj.weight", hidden, width)};
  }

  LayerWeights layer(int index, bool hasIndexer, bool isMoe) const {
    const ModelConfig& c = config_;
    const std::string p = "model.layers." + std::to_string(index) + ".";
    const std::string a = p + "self_attn.";
    LayerWeights w;
    w.index = index;
    w.inputNorm = vector(p + "input_layernorm.weight", c.hiddenSize);
    w.postAttentionNorm = vector(p + "post_attention_layernorm.weight", c.hiddenSize);

    AttentionWeights& at = w.attention;
    at.qA = matrix(a + "q_a_proj.weight", c.qLoraRank, c.hiddenSize);
    at.qANorm = vector(a + "q_a_layernorm.weight", c.qLoraRank);
    at.qB = matrix(a + "q_b_proj.weight", int64_t{c.numAttentionHeads} * c.qkHeadDim(), c.qLoraRank);
    at.kvA = matrix(a + "kv_a_proj_with_mqa.weight", c.kvLoraRank + c.qkRopeHeadDim, c.hiddenSize);
    at.kvANorm = vector(a + "kv_a_layernorm.weight", c.kvLoraRank);
    // Quantized as stored (a converted GLM-5 keeps kv_b int8: 1.2 GB over its 79 layers, where f32
    // would take 4.6 GB), else f32: the absorbed form reads f32 rows in place and widens a
    // quantized row per use (attention.cpp).
    at.kvB = source_.matrix(a + "kv_b_proj.weight",
                            int64_t{c.numAttentionHeads} * (c.qkNopeHeadDim + c.vHeadDim),
                            c.kvLoraRank, WeightPrecision::F32);
    at.o = matrix(a + "o_proj.weight", c.hiddenSize, int64_t{c.numAttentionHeads} * c.vHeadDim);

    if (hasIndexer) {
      const std::string ix = a + "indexer.";
      IndexerWeights iw;
      iw.wqB = matrix(ix + "wq_b.weight", int64_t{c.indexNHeads} * c.indexHeadDim, c.qLoraRank);
      iw.wk = matrix(ix + "wk.weight", c.indexHeadDim, c.hiddenSize);
      iw.kNormWeight = vector(ix + "k_norm.weight", c.indexHeadDim);
      iw.kNormBias = vector(ix + "k_norm.bias", c.indexHeadDim);
      iw.weightsProj = f32Matrix(ix + "weights_proj.weight", c.indexNHeads, c.hiddenSize);
      w.indexer = std::move(iw);
    }

    w.isMoe = isMoe;
    if (isMoe) {
      // Held as stored (bf16 under native precision, widened in registers): the routing
      // numbers are those of the widened f32 matrix, for half the bytes read per token.
      w.router.gate = matrix(p + "mlp.gate.weight", c.nRoutedExperts, c.hiddenSize);
      w.router.correctionBias = vector(p + "mlp.gate.e_score_correction_bias", c.nRoutedExperts);
      if (c.nSharedExperts > 0)
        w.sharedExperts = feedForward(p + "mlp.shared_experts.", c.sharedIntermediateSize());
    } else {
      w.dense = feedForward(p + "mlp.", c.intermediateSize);
    }
    return w;
  }

 private:
  const ModelConfig& config_;
  const WeightSource& source_;
  WeightPrecision precision_;
};

class ResidentExperts final : public ExpertSource {
 public:
  // experts[layer] is empty for dense layers.
  std::vector<std::vector<ExpertHandle>> experts;

  void prefetch(int, std::span<const int>, bool) override {}
  ExpertHandle tryGet(int layer, int expert) override { return get(layer, expert); }
  ExpertHandle get(int layer, int expert) override {
    return experts.at(static_cast<size_t>(layer)).at(static_cast<size_t>(expert));
  }
  bool wantsPrediction() const override { return false; }

  int64_t residentBytes() const override {
    int64_t total = 0;
    for (const auto& layer : experts)
      for (const ExpertHandle& e : layer) total += e->gate.bytes() + e->up.bytes() + e->down.bytes();
    return total;
  }
};

int64_t bytesOf(const Vector& v) { return static_cast<int64_t>(v.size() * sizeof(float)); }

int64_t bytesOf(const FeedForwardWeights& f) { return f.gate.bytes() + f.up.bytes() + f.down.bytes(); }

int64_t bytesOf(const LayerWeights& l) {
  const AttentionWeights& a = l.attention;
  int64_t total = bytesOf(l.inputNorm) + bytesOf(l.postAttentionNorm) + a.qA.bytes() +
                  bytesOf(a.qANorm) + a.qB.bytes() + a.kvA.bytes() + bytesOf(a.kvANorm) +
                  a.kvB.bytes() + a.o.bytes();
  if (l.indexer)
    total += l.indexer->wqB.bytes() + l.indexer->wk.bytes() + bytesOf(l.indexer->kNormWeight) +
             bytesOf(l.indexer->kNormBias) + l.indexer->weightsProj.bytes();
  total += bytesOf(l.dense) + l.router.gate.bytes() + bytesOf(l.router.correctionBias);
  if (l.sharedExperts) total += bytesOf(*l.sharedExperts);
  return total;
}

}  // namespace

ModelWeights loadModelWeights(const ModelConfig& config, const WeightSource& source,
                              WeightPrecision precision) {
  WeightLoader load(config, source, precision);
  ModelWeights w;
  w.embedTokens =
      source.embedding("model.embed_tokens.weight", config.vocabSize, config.hiddenSize, precision);
  w.finalNorm = load.vector("model.norm.weight", config.hiddenSize);
  const bool tiedHead = config.tieWordEmbeddings && !source.contains("lm_head.weight");
  w.lmHead = load.matrix(tiedHead ? "model.embed_tokens.weight" : "lm_head.weight",
                         config.vocabSize, config.hiddenSize);
  for (int i = 0; i < config.numHiddenLayers; ++i)
    w.layers.push_back(load.layer(i, config.layerHasIndexer[i], config.layerIsMoe[i]));

  if (config.hasMtp()) {
    const int index = config.numHiddenLayers;
    const std::string p = "model.layers." + std::to_string(index) + ".";
    MtpWeights m;
    m.enorm = load.vector(p + "enorm.weight", config.hiddenSize);
    m.hnorm = load.vector(p + "hnorm.weight", config.hiddenSize);
    m.ehProj = load.matrix(p + "eh_proj.weight", config.hiddenSize, 2 * int64_t{config.hiddenSize});
    m.sharedHeadNorm = load.vector(p + "shared_head.norm.weight", config.hiddenSize);
    // The MTP layer is a full MoE decoder layer with its own indexer (spec §2.3).
    m.layer = load.layer(index, /*hasIndexer=*/true, /*isMoe=*/true);
    w.mtp = std::move(m);
  }
  return w;
}

int64_t residentBytes(const ModelWeights& w) {
  int64_t total = w.embedTokens.bytes() + bytesOf(w.finalNorm) + w.lmHead.bytes();
  for (const LayerWeights& l : w.layers) total += bytesOf(l);
  if (w.mtp)
    total += bytesOf(w.mtp->enorm) + bytesOf(w.mtp->hnorm) + w.mtp->ehProj.bytes() +
             bytesOf(w.mtp->sharedHeadNorm) + bytesOf(w.mtp->layer);
  return total;
}

std::unique_ptr<ExpertSource> loadResidentExperts(const ModelConfig& config,
                                                  const WeightSource& source,
                                                  WeightPrecision precision) {
  WeightLoader load(config, source, precision);
  auto resident = std::make_unique<ResidentExperts>();
  const int layerCount = config.numHiddenLayers + (config.hasMtp() ? 1 : 0);
  resident->experts.resize(static_cast<size_t>(layerCount));
  for (int layer = 0; layer < layerCount; ++layer) {
    const bool isMoe = layer == config.numHiddenLayers || config.layerIsMoe[layer];
    if (!isMoe) continue;
    for (int e = 0; e < config.nRoutedExperts; ++e) {
      const std::string prefix =
          "model.layers." + std::to_string(layer) + ".mlp.experts." + std::to_string(e) + ".";
      resident->experts[layer].push_back(
          std::make_shared<const FeedForwardWeights>(load.feedForward(prefix, config.moeIntermediateSize)));
    }
  }
  return resident;
}

}  // namespace strata::model
