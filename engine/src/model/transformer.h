#pragma once
// The GLM-5 (glm_moe_dsa) forward pass, top level (glm5-architecture.md §3.1, §4).
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/matmul.h"
#include "kv/kv_cache.h"
#include "model/layer_context.h"
#include "model/moe.h"
#include "model/weights.h"

namespace strata::model {

// One sequence's rows in a step that batches several: its tokens go at positions
// cache->length(), ...
struct SequenceInput {
  std::span<const int32_t> tokens;
  kv::KvCache* cache = nullptr;
  bool asDecode = false;  // as forward()'s asDecode
};

class RoutingRecorder;

class Transformer {
 public:
  Transformer(const ModelConfig& config, const ModelWeights& weights, ExpertSource& experts,
              ForwardOptions options, kernels::KernelConfig kernelConfig = {});

  kv::KvCache newCache(KvPrecision precision = KvPrecision::F32) const;     // one entry per decoder layer
  kv::KvCache newMtpCache(KvPrecision precision = KvPrecision::F32) const;  // the MTP layer's own

  // Runs `tokens` at positions cache.length(), ... (appending to the cache, never recomputing
  // earlier tokens) and returns the final-normed hidden states [tokens x H].
  // asDecode: each row's result is bit-identical to running the tokens one at a time
  // (speculative verification); otherwise batches pick their cheapest form (prefill).
  std::vector<float> forward(std::span<const int32_t> tokens, kv::KvCache& cache,
                             bool asDecode = false) const;
  // Several sequences (distinct caches) as one step: every weight is read once for all their
  // rows (routed experts: once for the union). Returns the final-normed hidden states of all
  // rows, sequence after sequence; each row is bit-identical to forward() on its sequence alone.
  std::vector<float> forward(std::span<const SequenceInput> sequences) const;

  // lm_head over final-normed hidden states: [rows x vocab].
  std::vector<float> logits(const float* normedHidden, int64_t rows) const;
  // The same for one row over the listed tokens only; every other logit is -inf (a draft's
  // vocabulary: spec/draft_vocabulary.h). The listed logits equal logits()'s.
  std::vector<float> logitsOver(const float* normedHidden,
                                std::span<const kernels::RowRange> tokens) const;

  // The MTP layer (§4) for consecutive positions p = mtpCache.length(), ...: row i combines the
  // main model's final-normed hidden at p (hidden[i]) with the embedding of token p+1
  // (nextTokens[i]); returns shared_head.norm(z) [rows x H], whose logits predict token p+2.
  // lastRowOnly: returns the last row only [1 x H], and the rows before it only add their keys
  // to the cache (their attention, experts and outputs skipped: a draft reads the last row).
  std::vector<float> mtpForward(const float* hidden, std::span<const int32_t> nextTokens,
                                kv::KvCache& mtpCache, bool lastRowOnly = false) const;

  const ModelConfig& config() const { return context_.config; }
  // Every main-model step's routing goes to `recorder` (nullptr: none). Set before decoding.
  void setRoutingRecorder(RoutingRecorder* recorder) { recorder_ = recorder; }
  // `cache`'s conversation was cut to `length` tokens: the recorder's trail forgets the rest.
  void forgetRouting(const kv::KvCache& cache, int64_t length) const;
  // Throws strata::Error naming the first id outside the vocabulary.
  void checkTokenIds(std::span<const int32_t> tokens) const;

 private:
  // `next`: the following MoE layer (its experts are prefetched), or nullptr. Returns the MLP's
  // routing of each row (empty for a dense layer).
  std::vector<RoutingDecision> decoderLayer(const LayerWeights& layer, const LayerWeights* next,
                                            float* x, int64_t rows,
                                            const std::vector<SequenceStep>& sequences) const;
  std::vector<float> embed(std::span<const int32_t> tokens) const;

  ModelContext context_;
  const ModelWeights& weights_;
  ExpertSource& experts_;
  RoutingRecorder* recorder_ = nullptr;
};

}  // namespace strata::model
