#include "model/moe.h"

#include <omp.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <optional>

#include "kernels/exponentials.h"
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

namespace {

// One SwiGLU over m rows, computed by runFeedForwards.
struct FeedForwardTask {
  const FeedForwardWeights* w;
  const float* x;  // [m x H]
  int64_t m;
  float* out;  // [m x H]
  std::unique_ptr<float[]> gate, up;  // m x the intermediate size each, written whole
  std::vector<float> gathered;  // the task's own copy of its input rows, when it needs one
};

// Several SwiGLUs in one parallel region. Large ones (decode's experts on a real model): every
// gate and up product's rows in runs taken by whichever thread is free (rowChunks), then each
// task's SwiGLU and down-product input (one task per thread at a time), then every down
// product's rows the same way, so the threads stay balanced whatever the count (one expert per
// thread left one of two threads idle for a ninth of a decode layer: 8 routed + 1 shared). Small
// ones (a tiny model's): whole tasks per thread, as splitting them costs more in scheduling than it
// balances. Tasks reading the same rows (decode: every expert reads the one token) quantize
// them once. A row's numbers do not depend on the split, so each output is exactly a lone
// SwiGLU's.
void runFeedForwards(std::vector<FeedForwardTask>& tasks, const kernels::KernelConfig& k) {
  std::vector<kernels::RowProduct> gateUp;
  gateUp.reserve(2 * tasks.size());
  int64_t work = 0, largest = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    FeedForwardTask& t = tasks[i];
    const auto size = static_cast<size_t>(t.m * t.w->gate.rows());
    t.gate = std::make_unique_for_overwrite<float[]>(size);
    t.up = std::make_unique_for_overwrite<float[]>(size);
    // The nearest earlier task reading the same rows: int4 routed experts after a shared int8
    // one rearrange its quantization once, then share the first one's among themselves (bf16
    // experts share the first one's paired inputs).
    const kernels::RowProduct* sameInput = nullptr;
    for (size_t j = i; j-- > 0 && !sameInput;)
      if (tasks[j].x == t.x && tasks[j].m == t.m && gateUp[2 * j].lendsInputTo(t.w->gate))
        sameInput = &gateUp[2 * j];
    if (sameInput)
      gateUp.emplace_back(t.w->gate, *sameInput, t.gate.get());
    else
      gateUp.emplace_back(t.w->gate, t.x, t.m, t.gate.get(), k.integerActivations, k.intKernels);
    gateUp.emplace_back(t.w->up, gateUp[2 * i], t.up.get());
    const int64_t taskWork = 3 * gateUp.back().multiplyAdds();
    work += taskWork;
    largest = std::max(largest, taskWork);
  }
  const bool wholeTasks = tasks.size() > 1 && largest < kernels::kParallelThreshold;
  // Whole tasks on separate threads need no barrier between products: a quarter of the usual
  // threshold already pays (a tiny model's verify step of 3-4 rows and ~15 experts).
  const bool parallel =
      work >= (wholeTasks ? kernels::kParallelThreshold / 4 : kernels::kParallelThreshold);
  std::vector<std::optional<kernels::RowProduct>> down(tasks.size());
  std::vector<kernels::RowChunk> gateUpChunks, downChunks;
  if (!wholeTasks) {
    const int threads = parallel ? omp_get_max_threads() : 1;
    gateUpChunks = kernels::rowChunks(gateUp, threads);
    std::vector<int64_t> rows;  // the down products' (built inside the region)
    for (const FeedForwardTask& t : tasks) rows.push_back(t.w->down.rows());
    downChunks = kernels::rowChunks(rows, threads, tasks.front().w->down.cols() * tasks.front().m);
  }
  auto prepareDown = [&](size_t i) {
    FeedForwardTask& t = tasks[i];
    kernels::siluTimes(t.gate.get(), t.up.get(), t.m * t.w->gate.rows());
    down[i].emplace(t.w->down, t.gate.get(), t.m, t.out, k.integerActivations, k.intKernels);
  };
#pragma omp parallel if (parallel)
  {
    std::vector<float> scratch;  // a dequantized weight row, the thread's own
    if (wholeTasks) {
#pragma omp for schedule(dynamic, 1)
      for (size_t i = 0; i < tasks.size(); ++i) {
        for (const kernels::RowProduct* p : {&gateUp[2 * i], &gateUp[2 * i + 1]})
          p->computeRows(0, p->rows(), scratch);
        prepareDown(i);
        down[i]->computeRows(0, down[i]->rows(), scratch);
      }
    } else {
      kernels::shareRows(gateUp, gateUpChunks, scratch);
#pragma omp barrier
#pragma omp for schedule(dynamic, 1)
      for (size_t i = 0; i < tasks.size(); ++i) prepareDown(i);
#pragma omp for schedule(dynamic, 1) nowait
      for (size_t i = 0; i < downChunks.size(); ++i) {
        const kernels::RowChunk& c = downChunks[i];
        down[c.product]->computeRows(c.begin, c.end, scratch);
      }
    }
  }
}

}  // namespace

void feedForward(const FeedForwardWeights& w, const float* x, int64_t rows, float* out,
                 const kernels::KernelConfig& kernels) {
  std::vector<FeedForwardTask> task;
  task.push_back({&w, x, rows, out, {}, {}, {}});
  runFeedForwards(task, kernels);
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
  // The experts any row chose, ascending, and by their index there each one's rows with their
  // gate weights (a list per chosen expert, not per expert of the layer: decode chooses 8).
  std::vector<int> needed;
  for (int64_t row = 0; row < count; ++row) {
    const RoutingDecision& r = routes[static_cast<size_t>(row)];
    needed.insert(needed.end(), r.experts.begin(), r.experts.end());
  }
  std::sort(needed.begin(), needed.end());
  needed.erase(std::unique(needed.begin(), needed.end()), needed.end());
  std::vector<std::vector<std::pair<int64_t, float>>> users(needed.size());
  for (int64_t row = 0; row < count; ++row) {
    const RoutingDecision& r = routes[static_cast<size_t>(row)];
    for (size_t j = 0; j < r.experts.size(); ++j) {
      const auto at = std::lower_bound(needed.begin(), needed.end(), r.experts[j]) - needed.begin();
      users[static_cast<size_t>(at)].push_back({row, r.weights[j]});
    }
  }
  experts.prefetch(layer, needed, /*predicted=*/false);
  if (whileReading) whileReading();

  // Each expert's output goes to its own buffer as soon as its weights are in memory (any
  // order, the handle dropped at once so an evicted expert's bytes are freed); the outputs are
  // then summed in ascending expert order, so the result is bit-identical to computing with
  // every expert resident whatever arrives first. The shared expert joins the first round.
  std::vector<std::unique_ptr<float[]>> results(needed.size());  // written whole by `down`
  if (shared) sharedOut.resize(static_cast<size_t>(count * hidden));
  bool sharedPending = shared != nullptr;
  std::vector<size_t> pending(needed.size());
  for (size_t i = 0; i < pending.size(); ++i) pending[i] = i;
  struct Ready {
    size_t i;  // into `needed`
    ExpertHandle w;
  };
  std::vector<Ready> ready;
  std::vector<FeedForwardTask> tasks;
  auto rowsOf = [&](size_t i) { return static_cast<int64_t>(users[i].size()); };
  auto add = [&](Ready& e) {
    const auto& rows = users[e.i];
    const int64_t m = rowsOf(e.i);
    FeedForwardTask& t = tasks.emplace_back(FeedForwardTask{&*e.w, x, m, nullptr, {}, {}, {}});
    if (m < count) {  // else every row chose this expert: no copy
      t.gathered.resize(static_cast<size_t>(m * hidden));
      for (int64_t r = 0; r < m; ++r)
        std::copy(x + rows[r].first * hidden, x + (rows[r].first + 1) * hidden,
                  t.gathered.begin() + r * hidden);
      t.x = t.gathered.data();
    }
    results[e.i] = std::make_unique_for_overwrite<float[]>(static_cast<size_t>(m * hidden));
    t.out = results[e.i].get();
  };
  while (!pending.empty() || sharedPending) {
    ready.clear();
    for (size_t k = 0; k < pending.size();) {
      if (ExpertHandle w = experts.tryGet(layer, needed[pending[k]])) {
        ready.push_back({pending[k], std::move(w)});
        pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(k));
      } else {
        ++k;
      }
    }
    if (ready.empty() && !sharedPending) {  // nothing in memory yet: wait for the first one
      ready.push_back({pending.front(), experts.get(layer, needed[pending.front()])});
      pending.erase(pending.begin());
    }
    // In rounds of at most kRoundRows rows (a decode step: one round), so a prefill chunk's
    // gathered inputs and intermediate activations exist for one round at a time, and each
    // round's experts are released as soon as it is done.
    constexpr int64_t kRoundRows = 512;
    size_t next = 0;
    while (next < ready.size() || sharedPending) {
      tasks.clear();
      tasks.reserve(ready.size() + 1);  // `add` keeps references into it
      int64_t rows = 0;
      if (sharedPending) {
        tasks.push_back({shared, x, count, sharedOut.data(), {}, {}, {}});
        rows = count;
        sharedPending = false;
      }
      const size_t first = next;
      while (next < ready.size() && (tasks.empty() || rows + rowsOf(ready[next].i) <= kRoundRows)) {
        rows += rowsOf(ready[next].i);
        add(ready[next++]);
      }
      runFeedForwards(tasks, ctx.kernels);
      for (size_t j = first; j < next; ++j) ready[j].w.reset();
    }
  }
  // Each row's sum in the vector kernel, its outputs held in registers across its experts
  // (the adds in ascending expert order, as a loop over the experts would make them).
  std::vector<std::vector<const float*>> sources(static_cast<size_t>(count));
  std::vector<std::vector<float>> weights(static_cast<size_t>(count));
  for (size_t i = 0; i < needed.size(); ++i) {
    const auto& rows = users[i];
    for (size_t r = 0; r < rows.size(); ++r) {
      sources[static_cast<size_t>(rows[r].first)].push_back(results[i].get() + r * hidden);
      weights[static_cast<size_t>(rows[r].first)].push_back(rows[r].second);
    }
  }
  for (int64_t row = 0; row < count; ++row) {
    const auto& rowSources = sources[static_cast<size_t>(row)];
    kernels::addScaledRows(rowSources.data(), static_cast<int64_t>(rowSources.size()),
                           weights[static_cast<size_t>(row)].data(), 0, 1, hidden,
                           out + row * hidden, hidden);
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
