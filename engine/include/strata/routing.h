#pragma once
// Which experts the model's routers pick: decayed heat per (layer, expert) and the choices of
// the most recent tokens, for the app's heatmap and routing view. Kept for every model, resident
// or streaming (the streaming store's own heat also drives its pinned set; see tiers.h).
#include <cstdint>
#include <vector>

namespace strata {

// One token row of a forward step and the experts every MoE layer sent it to.
struct RoutedToken {
  int32_t token = 0;     // the row's input token
  int64_t position = 0;  // its position in its conversation
  int64_t step = 0;      // the forward step that computed it (RoutingSnapshot::steps counts them)
  std::vector<int> experts;  // [layers x expertsPerToken], each layer's by descending gate weight
  std::vector<float>
      weights;  // their gate weights (normalized and scaled, as the MoE applies them)
};

struct RoutingSnapshot {
  std::vector<int> layers;  // the main model's MoE layers (not the MTP layer), in row order
  int expertsPerLayer = 0;
  int expertsPerToken = 0;
  int64_t steps = 0;  // forward steps recorded
  // [layers x expertsPerLayer]: steps that used the expert, decayed with a half-life of 32
  // steps (an expert used by several rows of one step counts once, as in TierSnapshot).
  std::vector<float> heat;
  // The latest token rows, oldest first (at most 16): prompt and reply tokens of every session
  // (Engine::routingSnapshot()) or of one (routingSnapshot(session)). Rows that leave their
  // conversation (rejected speculative drafts, an edit's cut, a closed session) leave the
  // trail; the heat keeps them (they were computed).
  std::vector<RoutedToken> trail;
};

}  // namespace strata
