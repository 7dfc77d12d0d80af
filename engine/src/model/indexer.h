#pragma once
// The DSA lightning indexer (glm5-architecture.md §3.6): scores every visible key for each query
// and keeps the index_topk best, so attention on long contexts reads only those keys.
#include <vector>

#include "kv/kv_cache.h"
#include "model/layer_context.h"
#include "model/weights.h"

namespace strata::model {

// Appends the batch's indexer keys to `cache.indexKey` and returns each query's key selection.
// x: normalized attention input [count x H]; qLatent: normalized q latent [count x q_lora].
std::vector<KeySelection> runIndexer(const ModelContext& ctx, const IndexerWeights& w,
                                     const float* x, const float* qLatent, const TokenBatch& batch,
                                     kv::LayerCache& cache);

}  // namespace strata::model
