#include "model/moe.h"

#include <omp.h>

#include <algorithm>
#include <functional>
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
  kernels::matmulMany({{w.gate, gate.data()}, {w.up, up.data()}}, x, rows, kernels);
  for (size_t i = 0; i < gate.size(); ++i) gate[i] = silu(gate[i]) * up[i];
  kernels::matmul(w.down, gate.data(), rows, out, kernels);
}

namespace {

// Each selected expert runs once over every row that chose it (one read of its weights per
// batch, which is what makes streaming experts from disk viable). The experts already in memory
// run first, while the source reads the others. The shared experts (`shared`, may be null;
// always resident) go to `sharedOut`, computed while the routed ones load.
void runExperts(const ModelContext& ctx, int layer, ExpertSource& experts,
                const std::vector<RoutingDecision>& routes, const float* x, int64_t count,
                float* out, const std::function<void()>& whileReading,
                const FeedForwardWeights* shared, std::vector<float>& sharedOut) {
  const ModelConfig& c = ctx.config;
  const int64_t hidden = c.hiddenSize;
  std::vector<std::vector<std::pair<int64_t, float>>> users(static_cast<size_t>(c.nRoutedExperts));
  for (int64_t row = 0; row < count; ++row) {
    const RoutingDecision& r = routes[static_cast<size_t>(row)];
    for (size_t j = 0; j < r.experts.size(); ++j) users[r.experts[j]].push_back({row, r.weights[j]});
  }
  std::vector<int> needed;
  for (int e = 0; e < c.nRoutedExperts; ++e)
    if (!users[static_cast<size_t>(e)].empty()) needed.push_back(e);
  experts.prefetch(layer, needed, /*predicted=*/false);
  if (whileReading) whileReading();

  // Each expert's output goes to its own buffer as soon as its weights are in memory (any
  // order, the handle dropped at once so an evicted expert's bytes are freed); the outputs are
  // then summed in ascending expert order, so the result is bit-identical to computing with
  // every expert resident whatever arrives first.
  std::vector<std::vector<float>> results(needed.size());
  auto compute = [&](size_t i, const FeedForwardWeights& w) {
    const auto& rows = users[static_cast<size_t>(needed[i])];
    const int64_t m = static_cast<int64_t>(rows.size());
    std::vector<float> gathered(static_cast<size_t>(m * hidden));
    results[i].resize(static_cast<size_t>(m * hidden));
    for (int64_t r = 0; r < m; ++r)
      std::copy(x + rows[r].first * hidden, x + (rows[r].first + 1) * hidden,
                gathered.begin() + r * hidden);
    feedForward(w, gathered.data(), m, results[i].data(), ctx.kernels);
  };
  // Decode: one expert per thread (a single token's expert is too small to split well, and
  // one parallel region per batch of experts instead of three per expert saves the fork/join
  // cost). The shared expert is one more such task in the first batch: three regions fewer
  // per layer, where waking the other threads costs more than splitting its matmuls saves.
  // Batches of many tokens split each expert's matmuls across threads instead.
  const int64_t expertWork = 3 * hidden * c.moeIntermediateSize * count;  // multiply-adds
  const bool perThread = count <= 4 && omp_get_max_threads() > 1 &&
                         expertWork * static_cast<int64_t>(needed.size()) >= kernels::kParallelThreshold;
  if (shared) sharedOut.resize(static_cast<size_t>(count * hidden));
  auto computeShared = [&] { feedForward(*shared, x, count, sharedOut.data(), ctx.kernels); };
  bool sharedPending = shared != nullptr;
  if (sharedPending && !perThread) {
    computeShared();
    sharedPending = false;
  }
  std::vector<size_t> pending(needed.size());
  for (size_t i = 0; i < pending.size(); ++i) pending[i] = i;
  std::vector<size_t> batch;
  std::vector<ExpertHandle> handles;
  while (!pending.empty() || sharedPending) {
    batch.clear();
    handles.clear();
    for (size_t k = 0; k < pending.size();) {
      if (ExpertHandle w = experts.tryGet(layer, needed[pending[k]])) {
        batch.push_back(pending[k]);
        handles.push_back(std::move(w));
        pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(k));
      } else {
        ++k;
      }
    }
    if (batch.empty() && !sharedPending) {  // nothing in memory yet: wait for the first one
      batch.push_back(pending.front());
      handles.push_back(experts.get(layer, needed[pending.front()]));
      pending.erase(pending.begin());
    }
    const auto routed = static_cast<int64_t>(batch.size());
    const int64_t n = routed + (sharedPending ? 1 : 0);  // the shared expert is task `routed`
    auto run = [&](int64_t b) {
      if (b == routed)
        computeShared();
      else
        compute(batch[static_cast<size_t>(b)], *handles[static_cast<size_t>(b)]);
    };
    // Not `parallel for if (...)`: a region whose `if` is false still encloses the matmuls, and
    // their own regions then run nested (libgomp starts extra thread teams for them).
    if (perThread && n > 1) {
#pragma omp parallel for schedule(dynamic, 1)
      for (int64_t b = 0; b < n; ++b) run(b);
    } else {
      for (int64_t b = 0; b < n; ++b) run(b);
    }
    sharedPending = false;
  }
  for (size_t i = 0; i < needed.size(); ++i) {
    const auto& rows = users[static_cast<size_t>(needed[i])];
    for (size_t r = 0; r < rows.size(); ++r) {
      float* dst = out + rows[r].first * hidden;
      const float* src = results[i].data() + r * hidden;
      for (int64_t k = 0; k < hidden; ++k) dst[k] += rows[r].second * src[k];
    }
  }
}

}  // namespace

std::vector<RoutingDecision> routeRows(const ModelConfig& c, const RouterWeights& router,
                                       const float* x, int64_t count) {
  std::vector<float> logits(static_cast<size_t>(count * c.nRoutedExperts));
  kernels::matmul(router.gate, x, count, logits.data());
  std::vector<RoutingDecision> routes(static_cast<size_t>(count));
  for (int64_t row = 0; row < count; ++row)
    routes[row] = route(c, router, logits.data() + row * c.nRoutedExperts);
  return routes;
}

std::vector<int> predictExperts(const ModelConfig& c, const LayerWeights& later,
                                const float* residual, int64_t count) {
  std::vector<float> normed(static_cast<size_t>(count * c.hiddenSize));
  for (int64_t s = 0; s < count; ++s)
    rmsNorm(residual + s * c.hiddenSize, later.postAttentionNorm.data(), c.hiddenSize,
            c.rmsNormEps, normed.data() + s * c.hiddenSize);
  // Most likely first: every row's first choice, then every row's second, ...
  const std::vector<RoutingDecision> routes = routeRows(c, later.router, normed.data(), count);
  std::vector<bool> chosen(static_cast<size_t>(c.nRoutedExperts), false);
  std::vector<int> experts;
  for (size_t rank = 0; rank < static_cast<size_t>(c.numExpertsPerTok); ++rank)
    for (const RoutingDecision& d : routes)
      if (rank < d.experts.size() && !chosen[static_cast<size_t>(d.experts[rank])]) {
        chosen[static_cast<size_t>(d.experts[rank])] = true;
        experts.push_back(d.experts[rank]);
      }
  return experts;
}

std::vector<RoutingDecision> runMlp(const ModelContext& ctx, const LayerWeights& layer, ExpertSource& experts,
            const float* x, int64_t count, float* out, const LayerWeights* next,
            const float* residual) {
  const ModelConfig& c = ctx.config;
  if (!layer.isMoe) {
    feedForward(layer.dense, x, count, out, ctx.kernels);
    return {};
  }
  const std::vector<RoutingDecision> routes = routeRows(c, layer.router, x, count);
  std::fill(out, out + count * c.hiddenSize, 0.0f);
  // While this layer's missing experts load: predict the next layer's and queue them behind.
  auto whileReading = [&] {
    if (next && residual && experts.wantsPrediction())
      experts.prefetch(next->index, predictExperts(c, *next, residual, count), /*predicted=*/true);
  };
  std::vector<float> shared;
  runExperts(ctx, layer.index, experts, routes, x, count, out, whileReading,
             layer.sharedExperts ? &*layer.sharedExperts : nullptr, shared);
  for (size_t i = 0; i < shared.size(); ++i) out[i] += shared[i];
  return routes;
}

}  // namespace strata::model
