#pragma once
// The model configuration: every config.json field the engine uses, validated, as one plain
// struct. Field names follow config.json (camelCase here) so the spec maps one to one.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata::model {

struct ModelConfig {
  std::string modelType;  // "glm_moe_dsa"
  int vocabSize = 0;
  int hiddenSize = 0;
  int numHiddenLayers = 0;
  float rmsNormEps = 1e-5f;
  bool tieWordEmbeddings = false;

  // MLA attention.
  int numAttentionHeads = 0;
  int qLoraRank = 0;
  int kvLoraRank = 0;
  int qkNopeHeadDim = 0;
  int qkRopeHeadDim = 0;  // even: interleaved pairs
  int vHeadDim = 0;
  double ropeTheta = 10000.0;
  int maxPositionEmbeddings = 0;

  // DSA lightning indexer and IndexShare.
  int indexNHeads = 0;
  int indexHeadDim = 0;  // > qkRopeHeadDim: the first qkRopeHeadDim dims carry RoPE
  int indexTopk = 0;
  // Per decoder layer (numHiddenLayers entries): true = "full" (own indexer), false = "shared"
  // (reuses the top-k of the most recent full layer). Layer 0 is always full; the MTP layer
  // is always full.
  std::vector<bool> layerHasIndexer;

  // MLP / MoE.
  int intermediateSize = 0;     // dense layers
  int moeIntermediateSize = 0;  // each routed expert; shared width = this * nSharedExperts
  int nRoutedExperts = 0;
  int numExpertsPerTok = 0;
  int nSharedExperts = 0;
  int nGroup = 1;
  int topkGroup = 1;
  bool normTopkProb = true;
  float routedScalingFactor = 1.0f;
  std::vector<bool> layerIsMoe;  // numHiddenLayers entries

  int numNextnPredictLayers = 0;  // 0 or 1: the MTP layer at index numHiddenLayers
  std::vector<int> eosTokenIds;

  // FP8 checkpoints (quantization_config): block size of weight_scale_inv.
  bool fp8Weights = false;
  int fp8BlockRows = 128;
  int fp8BlockCols = 128;

  int qkHeadDim() const { return qkNopeHeadDim + qkRopeHeadDim; }
  int sharedIntermediateSize() const { return moeIntermediateSize * nSharedExperts; }
  bool hasMtp() const { return numNextnPredictLayers > 0; }
  // Values one token adds to the KV cache: every layer's latent and RoPE key, an indexer key
  // only on layers with their own indexer (IndexShare "shared" layers keep none), and the
  // MTP layer's (it has its own indexer).
  int64_t kvValuesPerToken() const {
    int64_t indexerLayers = hasMtp() ? 1 : 0;
    for (bool full : layerHasIndexer) indexerLayers += full ? 1 : 0;
    const int64_t layers = numHiddenLayers + (hasMtp() ? 1 : 0);
    return layers * (kvLoraRank + qkRopeHeadDim) + indexerLayers * indexHeadDim;
  }
};

// Parses and validates config.json text; `source` names the file in error messages.
// Throws strata::Error naming the field, the value found and what was expected.
ModelConfig parseModelConfig(std::string_view jsonText, std::string_view source);
ModelConfig loadModelConfig(const std::filesystem::path& configJson);

}  // namespace strata::model
