#pragma once
// The DSA lightning indexer (glm5-architecture.md §3.6): scores every visible key for each query
// and keeps the index_topk best, so attention on long contexts reads only those keys.
#include <vector>

#include "kv/kv_cache.h"
#include "model/layer_context.h"
#include "model/weights.h"

namespace strata::model {

// The indexer's projections of a step's rows (computed by the attention, together with its own
// products of the same inputs): queries = q latent . wq_b^T, raw keys = x . wk^T, and per-head
// gates = x . weights_proj^T in f32 (weights_proj is always held in f32).
struct IndexerProjections {
  IndexerProjections(const ModelConfig& config, int64_t rows);
  std::vector<float> q;      // [rows x index_n_heads x index_head_dim]
  std::vector<float> kRaw;   // [rows x index_head_dim]
  std::vector<float> gates;  // [rows x index_n_heads]
};

// Appends the indexer keys of `batch`'s rows, from their raw keys [rows x index_head_dim].
void appendIndexKeys(const ModelContext& ctx, const IndexerWeights& w, const float* kRaw,
                     const TokenBatch& batch, kv::LayerCache& cache);

// For each sequence of the step: appends its rows' indexer keys to its cache's indexKey and
// sets its selection to each query's key set (RoPE is applied to `projections.q` in place).
void runIndexer(const ModelContext& ctx, const IndexerWeights& w, IndexerProjections& projections,
                const std::vector<SequenceStep>& sequences);

}  // namespace strata::model
