#pragma once
// Multi-head latent attention with DSA sparse key selection (glm5-architecture.md §3.4-3.7).
#include <vector>

#include "kv/kv_cache.h"
#include "model/layer_context.h"
#include "model/weights.h"

namespace strata::model {

// Attention for a step of one or more sequences: each sequence appends its rows' latent, rope
// key (and indexer key on layers with an indexer) to its cache, then attends over that cache.
// A sequence's `selection` carries IndexShare state: a layer with an indexer replaces it with
// its own top-k sets, a shared layer reads the sets of the most recent full layer.
// x: normalized input [rows x H]; out: [rows x H]. A row's result does not depend on the other
// sequences in the step.
void runAttention(const ModelContext& ctx, const LayerWeights& layer, const float* x, int64_t rows,
                  const std::vector<SequenceStep>& sequences, float* out);

// Only the cache entries of `batch`'s rows (x: normalized input [rows x H]): their latent, rope
// key and, on a layer with an indexer, indexer key, exactly as runAttention appends them. For
// rows whose output no one reads: the MTP layer's catch-up rows before the one that drafts.
void appendKeys(const ModelContext& ctx, const LayerWeights& layer, const float* x,
                const TokenBatch& batch, kv::LayerCache& cache);

}  // namespace strata::model
