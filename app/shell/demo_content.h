#pragma once
// Sample content for `strata --demo` (screenshots and reviews): a conversation with thinking,
// Markdown and code, a few sidebar entries, a GLM-5-sized heatmap with plausible tiers and
// plausible speculation stats and time to first token.
// Nothing is stored and no model is loaded.
namespace strata::app {

class ChatController;
class PrefillMonitor;
class SpeculationMonitor;
class TierMonitor;

void fillDemo(ChatController& chat, TierMonitor& monitor, SpeculationMonitor& speculation,
              PrefillMonitor& prefill);

}  // namespace strata::app
