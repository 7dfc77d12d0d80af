#include "model/indexer.h"

#include <algorithm>
#include <cmath>

#include "kernels/matmul.h"

namespace strata::model {

namespace {

// Scores every visible key of one sequence for each of its queries and keeps the top k. Each
// key meets all of a query's heads at once (loaded once, in the per-vector-width row kernel).
// The rows' blocks of keys are split across threads in one parallel region, then their top-k
// selections: at long contexts this runs over every cached key of every full layer at every
// step, and a verify pass's rows would otherwise each take a region of their own.
std::vector<KeySelection> selectKeys(const ModelContext& ctx, const float* q, const float* gates,
                                     const TokenBatch& batch, const kv::LayerCache& cache) {
  constexpr int64_t kBlock = 64;                      // keys per task
  constexpr int64_t kScoreFloats = int64_t{1} << 20;  // scores held at once (rows per group)
  const ModelConfig& c = ctx.config;
  const int64_t n = batch.count;
  const int heads = c.indexNHeads;
  const int dim = c.indexHeadDim;
  const float gateScale = 1.0f / std::sqrt(static_cast<float>(heads));
  const float dotScale = 1.0f / std::sqrt(static_cast<float>(dim));

  // With at most index_topk keys visible the selection is every key, so attention stays
  // exactly dense (the common short-context case).
  std::vector<KeySelection> selection(static_cast<size_t>(n));
  std::vector<int64_t> pruned;  // the rows that select
  for (int64_t s = 0; s < n; ++s)
    if (!ctx.options.denseAttention && batch.visibleKeys(s) > c.indexTopk) pruned.push_back(s);
  if (pruned.empty()) return selection;
  std::vector<float> widened;  // a 16-bit cache's keys as f32
  const float* keys = cache.indexKey.rowsF32(0, cache.indexKey.rows(), widened);

  struct Block {
    int64_t row, first, count;
    float* scores;  // the row's scores of keys first..
  };
  std::vector<float> scores;
  std::vector<Block> blocks;
  for (size_t g = 0; g < pruned.size();) {
    // A group of rows whose scores fit kScoreFloats (always at least one row).
    size_t end = g;
    int64_t floats = 0;
    while (end < pruned.size() &&
           (end == g || floats + batch.visibleKeys(pruned[end]) <= kScoreFloats))
      floats += batch.visibleKeys(pruned[end++]);
    scores.resize(static_cast<size_t>(floats));
    blocks.clear();
    std::vector<float*> rowScores;
    float* next = scores.data();
    for (size_t i = g; i < end; ++i) {
      const int64_t visible = batch.visibleKeys(pruned[i]);
      rowScores.push_back(next);
      for (int64_t first = 0; first < visible; first += kBlock)
        blocks.push_back({pruned[i], first, std::min(kBlock, visible - first), next + first});
      next += visible;
    }
#pragma omp parallel if (floats * heads * dim >= kernels::kParallelThreshold)
    {
      std::vector<float> dots(static_cast<size_t>(heads * kBlock));  // [head][key of the block]
#pragma omp for schedule(dynamic)
      for (size_t k = 0; k < blocks.size(); ++k) {
        const Block& b = blocks[k];
        const float* qs = q + b.row * heads * dim;
        const float* gs = gates + b.row * heads;
        kernels::rowsTimesInputs(keys + b.first * dim, b.count, qs, heads, dim, kBlock,
                                 dots.data());
        // Head by head over the block's keys (contiguous, so it vectorizes); each key's sum
        // still adds the heads in order.
        std::fill_n(b.scores, b.count, 0.0f);
        for (int h = 0; h < heads; ++h) {
          const float gate = gs[h] * gateScale;
          const float* headDots = dots.data() + h * kBlock;
          for (int64_t t = 0; t < b.count; ++t)
            b.scores[t] += gate * std::max(headDots[t] * dotScale, 0.0f);
        }
      }
#pragma omp for schedule(dynamic)
      for (size_t i = g; i < end; ++i) {
        const int64_t s = pruned[i];
        const std::vector<int> best = topkIndicesInOrder(
            rowScores[i - g], static_cast<int>(batch.visibleKeys(s)), c.indexTopk);
        selection[static_cast<size_t>(s)] = {false, std::vector<int32_t>(best.begin(), best.end())};
      }
    }
    g = end;
  }
  return selection;
}

}  // namespace

IndexerProjections::IndexerProjections(const ModelConfig& c, int64_t rows)
    : q(static_cast<size_t>(rows * c.indexNHeads * c.indexHeadDim)),
      kRaw(static_cast<size_t>(rows * c.indexHeadDim)),
      gates(static_cast<size_t>(rows * c.indexNHeads)) {}

void appendIndexKeys(const ModelContext& ctx, const IndexerWeights& w, const float* kRaw,
                     const TokenBatch& batch, kv::LayerCache& cache) {
  // 1-3. Keys: LayerNorm, then RoPE on the first qk_rope_head_dim dims (as on each query head).
  const int dim = ctx.config.indexHeadDim;
  std::vector<float> keys(static_cast<size_t>(batch.count * dim));
  for (int64_t s = 0; s < batch.count; ++s) {
    float* key = keys.data() + s * dim;
    layerNorm(kRaw + s * dim, w.kNormWeight.data(), w.kNormBias.data(), dim, 1e-6f, key);
    ctx.rope.apply(key, batch.position(s));
  }
  cache.indexKey.append(keys.data(), keys.size());  // rounded to the cache's precision
}

void runIndexer(const ModelContext& ctx, const IndexerWeights& w, IndexerProjections& projections,
                const std::vector<SequenceStep>& sequences) {
  const ModelConfig& c = ctx.config;
  const int heads = c.indexNHeads;
  const int dim = c.indexHeadDim;
  std::vector<float>& q = projections.q;
  const std::vector<float>& kRaw = projections.kRaw;
  const std::vector<float>& gates = projections.gates;

  for (const SequenceStep& seq : sequences) {
    kv::LayerCache& cache = *seq.cache;
    appendIndexKeys(ctx, w, kRaw.data() + seq.firstRow * dim, seq.batch, cache);
    for (int64_t s = 0; s < seq.batch.count; ++s) {
      const Rope::Angles angles = ctx.rope.at(seq.batch.position(s));
      for (int h = 0; h < heads; ++h)
        ctx.rope.apply(q.data() + ((seq.firstRow + s) * heads + h) * dim, angles);
    }
    // 4-5. Scores over visible keys, then the top k.
    *seq.selection = selectKeys(ctx, q.data() + seq.firstRow * heads * dim,
                                gates.data() + seq.firstRow * heads, seq.batch, cache);
  }
}

}  // namespace strata::model
