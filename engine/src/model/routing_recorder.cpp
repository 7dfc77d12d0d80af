#include "model/routing_recorder.h"

#include <algorithm>
#include <numeric>

#include "strata/error.h"

namespace strata::model {
namespace {

// Half-life of 32 steps, as the expert store's heat (tier/expert_store.cpp).
constexpr float kHeatDecay = 0.97857206f;  // 0.5^(1/32)

}  // namespace

RoutingRecorder::RoutingRecorder(std::vector<int> moeLayers, int expertsPerLayer,
                                 int expertsPerToken) {
  const size_t cells = moeLayers.size() * static_cast<size_t>(expertsPerLayer);
  state_.layers = std::move(moeLayers);
  state_.expertsPerLayer = expertsPerLayer;
  state_.expertsPerToken = expertsPerToken;
  state_.heat.assign(cells, 0.0f);
  lastUse_.assign(cells, -1);
}

void RoutingRecorder::record(std::span<const int32_t> tokens,
                             std::span<const void* const> sequences,
                             std::span<const int64_t> positions,
                             const std::vector<std::vector<RoutingDecision>>& routes) {
  const size_t layers = state_.layers.size();
  const int experts = state_.expertsPerLayer;
  const int perToken = state_.expertsPerToken;
  if (routes.size() != layers)
    throw Error("routing recorder: a step has " + std::to_string(routes.size()) +
                " MoE layers, the model " + std::to_string(layers));
  if (sequences.size() != tokens.size() || positions.size() != tokens.size())
    throw Error("routing recorder: rows, sequences and positions differ in number");
  for (const std::vector<RoutingDecision>& layer : routes)
    if (layer.size() != tokens.size())
      throw Error("routing recorder: a layer routed " + std::to_string(layer.size()) +
                  " rows of a " + std::to_string(tokens.size()) + "-row step");
  std::lock_guard lock(mutex_);
  const int64_t step = state_.steps++;
  for (float& h : state_.heat) h *= kHeatDecay;
  for (size_t k = 0; k < layers; ++k)
    for (const RoutingDecision& d : routes[k])
      for (int e : d.experts) {
        const size_t cell = k * static_cast<size_t>(experts) + static_cast<size_t>(e);
        if (lastUse_[cell] == step) continue;  // once per step, however many rows chose it
        lastUse_[cell] = step;
        state_.heat[cell] += 1.0f;
      }

  // Only the rows that can still be in their conversation's trail are copied: its last
  // kTrailLength of this step.
  const size_t rows = tokens.size();
  std::vector<bool> keep(rows);
  std::unordered_map<const void*, size_t> later;  // a conversation's rows after this one
  for (size_t row = rows; row-- > 0;) keep[row] = later[sequences[row]]++ < kTrailLength;
  for (size_t row = 0; row < rows; ++row) {
    if (!keep[row]) continue;
    RoutedToken t;
    t.token = tokens[row];
    t.position = positions[row];
    t.step = step;
    t.experts.reserve(layers * static_cast<size_t>(perToken));
    t.weights.reserve(layers * static_cast<size_t>(perToken));
    for (size_t k = 0; k < layers; ++k) {
      const RoutingDecision& d = routes[k][row];
      std::vector<size_t> order(d.experts.size());
      std::iota(order.begin(), order.end(), size_t{0});
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return d.weights[a] > d.weights[b]; });
      for (size_t i : order) {
        t.experts.push_back(d.experts[i]);
        t.weights.push_back(d.weights[i]);
      }
    }
    std::deque<TrailRow>& own = trails_[sequences[row]];
    own.push_back({serial_++, std::move(t)});
    if (own.size() > kTrailLength) own.pop_front();
  }
}

void RoutingRecorder::forget(const void* sequence, int64_t length) {
  std::lock_guard lock(mutex_);
  if (length <= 0) {
    trails_.erase(sequence);
  } else if (auto own = trails_.find(sequence); own != trails_.end()) {
    std::erase_if(own->second, [&](const TrailRow& r) { return r.token.position >= length; });
  }
}

RoutingSnapshot RoutingRecorder::snapshot(Trail trail, const void* sequence) const {
  std::lock_guard lock(mutex_);
  RoutingSnapshot snap = state_;
  if (trail == Trail::Omit) return snap;
  std::vector<const TrailRow*> shown;
  for (const auto& [owner, rows] : trails_)
    if (!sequence || owner == sequence)
      for (const TrailRow& r : rows) shown.push_back(&r);
  std::sort(shown.begin(), shown.end(),
            [](const TrailRow* a, const TrailRow* b) { return a->serial < b->serial; });
  const size_t first = shown.size() > kTrailLength ? shown.size() - kTrailLength : 0;
  for (size_t i = first; i < shown.size(); ++i) snap.trail.push_back(shown[i]->token);
  return snap;
}

}  // namespace strata::model
