#pragma once
// Keeps RoutingSnapshot up to date from the forward pass: each step hands over its rows' tokens
// and every MoE layer's routing decisions. Thread-safe: steps record from the decoding threads
// while the app polls snapshots.
#include <cstdint>
#include <deque>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "model/moe.h"
#include "strata/routing.h"

namespace strata::model {

class RoutingRecorder {
 public:
  static constexpr size_t kTrailLength = 16;

  RoutingRecorder(std::vector<int> moeLayers, int expertsPerLayer, int expertsPerToken);

  // One forward step: `routes[k][row]` is MoE layer k's decision for row `row` of `tokens`;
  // the row is at `positions[row]` of the conversation `sequences[row]` identifies (its KV cache).
  void record(std::span<const int32_t> tokens, std::span<const void* const> sequences,
              std::span<const int64_t> positions,
              const std::vector<std::vector<RoutingDecision>>& routes);
  // The conversation `sequence` was cut to `length` tokens (0: it ended): its later rows leave
  // the trail.
  void forget(const void* sequence, int64_t length);
  enum class Trail { Include, Omit };  // Omit: only the heat (a tier snapshot's poll)
  // The trail of every conversation's rows, or (`sequence` not null) of that one's only.
  RoutingSnapshot snapshot(Trail trail = Trail::Include, const void* sequence = nullptr) const;

 private:
  mutable std::mutex mutex_;
  RoutingSnapshot state_;  // trail kept in trails_ instead
  struct TrailRow {
    uint64_t serial;  // recording order across conversations
    RoutedToken token;
  };
  // Each conversation's latest rows; the latest of all are the last kTrailLength by serial.
  std::unordered_map<const void*, std::deque<TrailRow>> trails_;
  uint64_t serial_ = 0;
  std::vector<int64_t> lastUse_;  // [layers x experts]: the step that last used it (dedupe)
};

}  // namespace strata::model
