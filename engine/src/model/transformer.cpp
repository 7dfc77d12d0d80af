#include "model/transformer.h"

#include <limits>
#include <string>

#include "kernels/matmul.h"
#include "model/attention.h"
#include "model/moe.h"
#include "model/routing_recorder.h"
#include "strata/error.h"

namespace strata::model {

Transformer::Transformer(const ModelConfig& config, const ModelWeights& weights,
                         ExpertSource& experts, ForwardOptions options,
                         kernels::KernelConfig kernelConfig)
    : context_{config, Rope(config.qkRopeHeadDim, config.ropeTheta), options, kernelConfig},
      weights_(weights),
      experts_(experts) {}

kv::KvCache Transformer::newCache(KvPrecision precision) const {
  const ModelConfig& c = config();
  return kv::KvCache(c.numHiddenLayers, {c.kvLoraRank, c.qkRopeHeadDim, c.indexHeadDim}, precision);
}

kv::KvCache Transformer::newMtpCache(KvPrecision precision) const {
  const ModelConfig& c = config();
  return kv::KvCache(1, {c.kvLoraRank, c.qkRopeHeadDim, c.indexHeadDim}, precision);
}

void Transformer::checkTokenIds(std::span<const int32_t> tokens) const {
  for (const int32_t t : tokens)
    if (t < 0 || t >= config().vocabSize)
      throw Error("token id " + std::to_string(t) + " is out of range: the model's vocabulary has " +
                  std::to_string(config().vocabSize) + " tokens");
}

std::vector<float> Transformer::embed(std::span<const int32_t> tokens) const {
  checkTokenIds(tokens);
  const int64_t hidden = config().hiddenSize;
  std::vector<float> x(tokens.size() * static_cast<size_t>(hidden));
  for (size_t i = 0; i < tokens.size(); ++i) weights_.embedTokens.row(tokens[i], x.data() + i * hidden);
  return x;
}

// §3.1: a = x + Attn(RMSNorm_in(x)); out = a + MLP(RMSNorm_post(a)).
std::vector<RoutingDecision> Transformer::decoderLayer(
    const LayerWeights& layer, const LayerWeights* next, float* x, int64_t rows,
    const std::vector<SequenceStep>& sequences) const {
  const ModelConfig& c = config();
  const int64_t hidden = c.hiddenSize;
  const size_t size = static_cast<size_t>(rows * hidden);
  std::vector<float> normed(size);
  std::vector<float> delta(size);

  for (int64_t s = 0; s < rows; ++s)
    rmsNorm(x + s * hidden, layer.inputNorm.data(), hidden, c.rmsNormEps, normed.data() + s * hidden);
  runAttention(context_, layer, normed.data(), rows, sequences, delta.data());
  for (size_t i = 0; i < size; ++i) x[i] += delta[i];

  for (int64_t s = 0; s < rows; ++s)
    rmsNorm(x + s * hidden, layer.postAttentionNorm.data(), hidden, c.rmsNormEps,
            normed.data() + s * hidden);
  std::vector<RoutingDecision> routes =
      runMlp(context_, layer, experts_, normed.data(), rows, delta.data(), next, x);
  for (size_t i = 0; i < size; ++i) x[i] += delta[i];
  return routes;
}

std::vector<float> Transformer::forward(std::span<const int32_t> tokens, kv::KvCache& cache,
                                       bool asDecode) const {
  const SequenceInput one{tokens, &cache, asDecode};
  return forward(std::span<const SequenceInput>(&one, 1));
}

std::vector<float> Transformer::forward(std::span<const SequenceInput> sequences) const {
  const ModelConfig& c = config();
  std::vector<int32_t> tokens;
  std::vector<TokenBatch> batches;
  for (const SequenceInput& seq : sequences) {
    batches.push_back({seq.cache->length(), static_cast<int64_t>(seq.tokens.size()), seq.asDecode});
    tokens.insert(tokens.end(), seq.tokens.begin(), seq.tokens.end());
  }
  const auto rows = static_cast<int64_t>(tokens.size());
  std::vector<float> x = embed(tokens);
  // IndexShare: each sequence's key sets, threaded from full layers to shared ones.
  std::vector<std::vector<KeySelection>> selections(sequences.size());
  const auto& layers = weights_.layers;
  std::vector<std::vector<RoutingDecision>> routes;  // per MoE layer, for the recorder
  for (size_t i = 0; i < layers.size(); ++i) {
    std::vector<SequenceStep> steps;
    int64_t firstRow = 0;
    for (size_t k = 0; k < sequences.size(); ++k) {
      steps.push_back({firstRow, batches[k], &sequences[k].cache->layer(layers[i].index), &selections[k]});
      firstRow += batches[k].count;
    }
    // The next layer's experts are predicted and prefetched while this one computes.
    const LayerWeights* next = i + 1 < layers.size() && layers[i + 1].isMoe ? &layers[i + 1] : nullptr;
    std::vector<RoutingDecision> layerRoutes = decoderLayer(layers[i], next, x.data(), rows, steps);
    if (recorder_ && layers[i].isMoe) routes.push_back(std::move(layerRoutes));
  }
  for (size_t k = 0; k < sequences.size(); ++k) sequences[k].cache->commit(batches[k].count);
  if (recorder_) {
    std::vector<const void*> rowSequence;
    std::vector<int64_t> rowPosition;
    for (size_t k = 0; k < sequences.size(); ++k)
      for (int64_t r = 0; r < batches[k].count; ++r) {
        rowSequence.push_back(sequences[k].cache);
        rowPosition.push_back(batches[k].position(r));
      }
    recorder_->record(tokens, rowSequence, rowPosition, routes);
  }

  for (int64_t s = 0; s < rows; ++s) {
    float* row = x.data() + s * c.hiddenSize;
    rmsNorm(row, weights_.finalNorm.data(), c.hiddenSize, c.rmsNormEps, row);
  }
  return x;
}

void Transformer::forgetRouting(const kv::KvCache& cache, int64_t length) const {
  if (recorder_) recorder_->forget(&cache, length);
}

std::vector<float> Transformer::logits(const float* normedHidden, int64_t rows) const {
  std::vector<float> out(static_cast<size_t>(rows * config().vocabSize));
  kernels::matmul(weights_.lmHead, normedHidden, rows, out.data(), context_.kernels);
  return out;
}

std::vector<float> Transformer::logitsOver(const float* normedHidden,
                                           std::span<const kernels::RowRange> tokens) const {
  std::vector<float> out(static_cast<size_t>(config().vocabSize),
                         -std::numeric_limits<float>::infinity());
  kernels::matmulRows(weights_.lmHead, normedHidden, 1, tokens, out.data(), context_.kernels);
  return out;
}

std::vector<float> Transformer::mtpForward(const float* hidden, std::span<const int32_t> nextTokens,
                                           kv::KvCache& mtpCache, bool lastRowOnly) const {
  const ModelConfig& c = config();
  if (!weights_.mtp) throw Error("this model has no MTP layer (num_nextn_predict_layers is 0)");
  const MtpWeights& m = *weights_.mtp;
  const int64_t h = c.hiddenSize;
  const TokenBatch batch{mtpCache.length(), static_cast<int64_t>(nextTokens.size())};

  // u = eh_proj([enorm(embed(t_{p+1})); hnorm(h_p)]) — the embedding half first (§4 step 3).
  const std::vector<float> e = embed(nextTokens);
  std::vector<float> joined(static_cast<size_t>(batch.count * 2 * h));
  for (int64_t s = 0; s < batch.count; ++s) {
    float* row = joined.data() + s * 2 * h;
    rmsNorm(e.data() + s * h, m.enorm.data(), h, c.rmsNormEps, row);
    rmsNorm(hidden + s * h, m.hnorm.data(), h, c.rmsNormEps, row + h);
  }
  std::vector<float> x(static_cast<size_t>(batch.count * h));
  kernels::matmul(m.ehProj, joined.data(), batch.count, x.data(), context_.kernels);

  // The rows whose output is read: all, or the last (the others' keys appended first).
  TokenBatch outputs = batch;
  if (lastRowOnly && batch.count > 1) {
    const TokenBatch keysOnly{batch.start, batch.count - 1};
    std::vector<float> normed(static_cast<size_t>(keysOnly.count * h));
    for (int64_t s = 0; s < keysOnly.count; ++s)
      rmsNorm(x.data() + s * h, m.layer.inputNorm.data(), h, c.rmsNormEps, normed.data() + s * h);
    appendKeys(context_, m.layer, normed.data(), keysOnly, mtpCache.layer(0));
    x.erase(x.begin(), x.end() - h);
    outputs = {batch.start + keysOnly.count, 1};
  }
  std::vector<KeySelection> selection;
  decoderLayer(m.layer, nullptr, x.data(), outputs.count,
               {{0, outputs, &mtpCache.layer(0), &selection}});
  mtpCache.commit(batch.count);
  for (int64_t s = 0; s < outputs.count; ++s) {
    float* row = x.data() + s * h;
    rmsNorm(row, m.sharedHeadNorm.data(), h, c.rmsNormEps, row);
  }
  return x;
}

}  // namespace strata::model
