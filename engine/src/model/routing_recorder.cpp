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

  // Only the rows that can still be in the trail are copied.
  const size_t rows = tokens.size();
  for (size_t row = rows > kTrailLength ? rows - kTrailLength : 0; row < rows; ++row) {
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
    std::deque<RoutedToken>& own = bySequence_[sequences[row]];
    own.push_back(t);
    if (own.size() > kTrailLength) own.pop_front();
    trail_.push_back({sequences[row], std::move(t)});
    if (trail_.size() > kTrailLength) trail_.pop_front();
  }
}

void RoutingRecorder::forget(const void* sequence, int64_t length) {
  std::lock_guard lock(mutex_);
  std::erase_if(trail_, [&](const TrailRow& r) {
    return r.sequence == sequence && r.token.position >= length;
  });
  if (length <= 0) {
    bySequence_.erase(sequence);
  } else if (auto own = bySequence_.find(sequence); own != bySequence_.end()) {
    std::erase_if(own->second, [&](const RoutedToken& t) { return t.position >= length; });
  }
}

RoutingSnapshot RoutingRecorder::snapshot(Trail trail, const void* sequence) const {
  std::lock_guard lock(mutex_);
  RoutingSnapshot snap = state_;
  if (trail == Trail::Omit) return snap;
  if (!sequence) {
    for (const TrailRow& r : trail_) snap.trail.push_back(r.token);
  } else if (auto own = bySequence_.find(sequence); own != bySequence_.end()) {
    snap.trail.assign(own->second.begin(), own->second.end());
  }
  return snap;
}

}  // namespace strata::model
