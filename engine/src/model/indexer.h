#pragma once
// The DSA lightning indexer (glm5-architecture.md §3.6): scores every visible key for each query
// and keeps the index_topk best, so attention on long contexts reads only those keys.
#include <vector>

#include "kv/kv_cache.h"
#include "model/layer_context.h"
#include "model/weights.h"

namespace strata::model {

// For each sequence of the step: appends its rows' indexer keys to its cache's indexKey and
// sets its selection to each query's key set. x: normalized attention input [rows x H];
// qLatent: normalized q latent [rows x q_lora]; the projections run once for all rows.
void runIndexer(const ModelContext& ctx, const IndexerWeights& w, const float* x,
                const float* qLatent, int64_t rows, const std::vector<SequenceStep>& sequences);

}  // namespace strata::model
