#pragma once
// Sample content for `strata --demo` (screenshots and reviews): a conversation with thinking,
// Markdown and code, a few sidebar entries, and a GLM-5-sized heatmap with plausible tiers.
// Nothing is stored and no model is loaded.
namespace strata::app {

class ChatController;
class TierMonitor;

void fillDemo(ChatController& chat, TierMonitor& monitor);

}  // namespace strata::app
