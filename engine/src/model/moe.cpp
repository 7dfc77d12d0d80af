#include "model/moe.h"

#include <algorithm>
#include <limits>

#include "kernels/matmul.h"
#include "model/ops.h"

namespace strata::model {

RoutingDecision route(const ModelConfig& c, const RouterWeights& router, const float* logits) {
  const int experts = c.nRoutedExperts;
  // 2. Sigmoid scores (f32); the correction bias only steers the selection.
  std::vector<float> scores(static_cast<size_t>(experts));
  std::vector<float> choice(static_cast<size_t>(experts));
  for (int e = 0; e < experts; ++e) {
    scores[e] = sigmoid(logits[e]);
    choice[e] = scores[e] + router.correctionBias[e];
  }
  // 3. Group-limited routing: keep the topk_group groups whose two best experts sum highest.
  if (c.nGroup > 1) {
    const int groupSize = experts / c.nGroup;
    std::vector<float> groupScores(static_cast<size_t>(c.nGroup));
    for (int g = 0; g < c.nGroup; ++g) {
      std::vector<int> best = topkIndices(choice.data() + g * groupSize, groupSize, 2);
      groupScores[g] = choice[g * groupSize + best[0]] + choice[g * groupSize + best[1]];
    }
    std::vector<int> keep = topkIndices(groupScores.data(), c.nGroup, c.topkGroup);
    std::vector<bool> kept(static_cast<size_t>(c.nGroup), false);
    for (int g : keep) kept[g] = true;
    for (int e = 0; e < experts; ++e)
      if (!kept[e / groupSize]) choice[e] = -std::numeric_limits<float>::infinity();
  }
  // 4. Top-k experts; gates from the unbiased scores.
  RoutingDecision d;
  d.experts = topkIndices(choice.data(), experts, c.numExpertsPerTok);
  double sum = 0.0;
  for (int e : d.experts) {
    d.weights.push_back(scores[e]);
    sum += scores[e];
  }
  for (float& g : d.weights) {
    if (c.normTopkProb) g = static_cast<float>(g / (sum + 1e-20));
    g *= c.routedScalingFactor;
  }
  return d;
}

void feedForward(const FeedForwardWeights& w, const float* x, int64_t rows, float* out,
                 const kernels::KernelConfig& kernels) {
  const int64_t width = w.gate.rows();
  std::vector<float> gate(static_cast<size_t>(rows * width));
  std::vector<float> up(static_cast<size_t>(rows * width));
  kernels::matmul(w.gate, x, rows, gate.data(), kernels);
  kernels::matmul(w.up, x, rows, up.data(), kernels);
  for (size_t i = 0; i < gate.size(); ++i) gate[i] = silu(gate[i]) * up[i];
  kernels::matmul(w.down, gate.data(), rows, out, kernels);
}

namespace {

// Each selected expert runs once over every row that chose it (one read of its weights per
// batch, which is what makes streaming experts from disk viable).
void runExperts(const ModelContext& ctx, int layer, ExpertSource& experts,
                const std::vector<RoutingDecision>& routes, const float* x, int64_t count,
                float* out) {
  const ModelConfig& c = ctx.config;
  const int64_t hidden = c.hiddenSize;
  std::vector<std::vector<std::pair<int64_t, float>>> users(static_cast<size_t>(c.nRoutedExperts));
  for (int64_t row = 0; row < count; ++row) {
    const RoutingDecision& r = routes[static_cast<size_t>(row)];
    for (size_t j = 0; j < r.experts.size(); ++j) users[r.experts[j]].push_back({row, r.weights[j]});
  }
  std::vector<float> gathered;
  std::vector<float> result;
  for (int e = 0; e < c.nRoutedExperts; ++e) {
    const auto& rows = users[static_cast<size_t>(e)];
    if (rows.empty()) continue;
    const int64_t m = static_cast<int64_t>(rows.size());
    gathered.resize(static_cast<size_t>(m * hidden));
    result.resize(static_cast<size_t>(m * hidden));
    for (int64_t i = 0; i < m; ++i)
      std::copy(x + rows[i].first * hidden, x + (rows[i].first + 1) * hidden,
                gathered.begin() + i * hidden);
    feedForward(experts.expert(layer, e), gathered.data(), m, result.data(), ctx.kernels);
    for (int64_t i = 0; i < m; ++i) {
      float* dst = out + rows[i].first * hidden;
      const float* src = result.data() + i * hidden;
      for (int64_t k = 0; k < hidden; ++k) dst[k] += rows[i].second * src[k];
    }
  }
}

}  // namespace

void runMlp(const ModelContext& ctx, const LayerWeights& layer, ExpertSource& experts,
            const float* x, int64_t count, float* out) {
  const ModelConfig& c = ctx.config;
  if (!layer.isMoe) {
    feedForward(layer.dense, x, count, out, ctx.kernels);
    return;
  }
  // 1. Router logits in f32 for the whole batch.
  std::vector<float> logits(static_cast<size_t>(count * c.nRoutedExperts));
  kernels::matmul(layer.router.gate, x, count, logits.data());
  std::vector<RoutingDecision> routes(static_cast<size_t>(count));
  for (int64_t row = 0; row < count; ++row)
    routes[row] = route(c, layer.router, logits.data() + row * c.nRoutedExperts);

  std::fill(out, out + count * c.hiddenSize, 0.0f);
  runExperts(ctx, layer.index, experts, routes, x, count, out);
  if (layer.sharedExperts) {
    std::vector<float> shared(static_cast<size_t>(count * c.hiddenSize));
    feedForward(*layer.sharedExperts, x, count, shared.data(), ctx.kernels);
    for (size_t i = 0; i < shared.size(); ++i) out[i] += shared[i];
  }
}

}  // namespace strata::model
