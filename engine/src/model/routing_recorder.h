#pragma once
// Keeps RoutingSnapshot up to date from the forward pass: each step hands over its rows' tokens
// and every MoE layer's routing decisions. Thread-safe: steps record from the decoding threads
// while the app polls snapshots.
#include <cstdint>
#include <deque>
#include <mutex>
#include <span>
#include <vector>

#include "model/moe.h"
#include "strata/routing.h"

namespace strata::model {

class RoutingRecorder {
 public:
  static constexpr size_t kTrailLength = 16;

  RoutingRecorder(std::vector<int> moeLayers, int expertsPerLayer, int expertsPerToken);

  // One forward step: `routes[k][row]` is MoE layer k's decision for row `row` of `tokens`.
  void record(std::span<const int32_t> tokens, const std::vector<std::vector<RoutingDecision>>& routes);
  RoutingSnapshot snapshot() const;

 private:
  mutable std::mutex mutex_;
  RoutingSnapshot state_;  // trail kept in trail_ instead
  std::deque<RoutedToken> trail_;
  std::vector<int64_t> lastUse_;  // [layers x experts]: the step that last used it (dedupe)
};

}  // namespace strata::model
