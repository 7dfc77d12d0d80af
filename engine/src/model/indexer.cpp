#include "model/indexer.h"

#include <algorithm>
#include <cmath>

#include "kernels/matmul.h"

namespace strata::model {

std::vector<KeySelection> runIndexer(const ModelContext& ctx, const IndexerWeights& w,
                                     const float* x, const float* qLatent, const TokenBatch& batch,
                                     kv::LayerCache& cache) {
  const ModelConfig& c = ctx.config;
  const int64_t n = batch.count;
  const int heads = c.indexNHeads;
  const int dim = c.indexHeadDim;

  // 1-2. Queries from the q latent, keys from x (LayerNorm before RoPE); RoPE on the first
  // qk_rope_head_dim dims of each.
  std::vector<float> q(static_cast<size_t>(n * heads * dim));
  kernels::matmul(w.wqB, qLatent, n, q.data(), ctx.kernels);
  std::vector<float> kRaw(static_cast<size_t>(n * dim));
  kernels::matmul(w.wk, x, n, kRaw.data(), ctx.kernels);
  const size_t oldKeys = cache.indexKey.size();
  cache.indexKey.resize(oldKeys + static_cast<size_t>(n * dim));
  for (int64_t s = 0; s < n; ++s) {
    float* key = cache.indexKey.data() + oldKeys + s * dim;
    layerNorm(kRaw.data() + s * dim, w.kNormWeight.data(), w.kNormBias.data(), dim, 1e-6f, key);
    ctx.rope.apply(key, batch.position(s));
    for (int h = 0; h < heads; ++h) ctx.rope.apply(q.data() + (s * heads + h) * dim, batch.position(s));
  }
  cache.round(cache.indexKey.data() + oldKeys, static_cast<size_t>(n * dim));

  // 3. Per-head gates in f32 (weightsProj is always held in f32).
  std::vector<float> gates(static_cast<size_t>(n * heads));
  kernels::matmul(w.weightsProj, x, n, gates.data(), ctx.kernels);
  const float gateScale = 1.0f / std::sqrt(static_cast<float>(heads));
  const float dotScale = 1.0f / std::sqrt(static_cast<float>(dim));

  // 4-5. Scores over visible keys, then the top k. With at most index_topk keys visible the
  // selection is every key, so attention stays exactly dense (the common short-context case).
  std::vector<KeySelection> selection(static_cast<size_t>(n));
  const float* keys = cache.indexKey.data();
  const bool parallel = n * batch.visibleKeys(n - 1) * heads * dim >= kernels::kParallelThreshold;
#pragma omp parallel if (parallel)
  {
    std::vector<float> scores;
#pragma omp for schedule(dynamic)
    for (int64_t s = 0; s < n; ++s) {
      const int64_t visible = batch.visibleKeys(s);
      if (ctx.options.denseAttention || visible <= c.indexTopk) continue;
      scores.assign(static_cast<size_t>(visible), 0.0f);
      const float* qs = q.data() + s * heads * dim;
      const float* gs = gates.data() + s * heads;
      for (int64_t t = 0; t < visible; ++t) {
        float score = 0.0f;
        for (int h = 0; h < heads; ++h) {
          const float d = kernels::dot(qs + h * dim, keys + t * dim, dim) * dotScale;
          score += gs[h] * gateScale * std::max(d, 0.0f);
        }
        scores[static_cast<size_t>(t)] = score;
      }
      std::vector<int> best = topkIndices(scores.data(), static_cast<int>(visible), c.indexTopk);
      std::sort(best.begin(), best.end());
      selection[static_cast<size_t>(s)] = {false, std::vector<int32_t>(best.begin(), best.end())};
    }
  }
  return selection;
}

}  // namespace strata::model
