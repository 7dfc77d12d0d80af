#pragma once
// Multi-head latent attention with DSA sparse key selection (glm5-architecture.md §3.4-3.7).
#include <vector>

#include "kv/kv_cache.h"
#include "model/layer_context.h"
#include "model/weights.h"

namespace strata::model {

// Attention for a batch: appends the batch's latent, rope key (and indexer key on layers with
// an indexer) to `cache`, then attends over the cache. `selection` carries IndexShare state:
// a layer with an indexer replaces it with its own top-k sets, a shared layer reads the sets
// of the most recent full layer. x: normalized input [count x H]; out: [count x H].
void runAttention(const ModelContext& ctx, const LayerWeights& layer, const float* x,
                  const TokenBatch& batch, kv::LayerCache& cache,
                  std::vector<KeySelection>& selection, float* out);

}  // namespace strata::model
