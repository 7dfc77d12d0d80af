#pragma once
// Sample content for `strata --demo` (screenshots and reviews): a conversation with thinking,
// Markdown and code, a few sidebar entries, a GLM-5-sized heatmap with plausible tiers, the
// routing of the reply's last tokens, plausible speculation stats and time to first token.
// Nothing is stored and no model is loaded.
namespace strata::app {

class ChatController;
class PrefillMonitor;
class RoutingMonitor;
class SpeculationMonitor;
class TierMonitor;

void fillDemo(ChatController& chat, TierMonitor& monitor, RoutingMonitor& routing,
              SpeculationMonitor& speculation, PrefillMonitor& prefill);

}  // namespace strata::app
