#pragma once
// Plain values that cross the thread boundary between the GUI and the engine worker (queued
// signals copy them). No Qt object and no engine pointer travels in them.
#include <QList>
#include <QMetaType>
#include <QString>
#include <QVector>
#include <cstdint>

namespace strata::app {

// The expert tiers' live settings (the engine's retune): share of the expert memory pinned,
// and prefetching of predicted experts.
struct TierChoice {
  int pinnedPercent = 25;
  bool prefetch = true;
  bool operator==(const TierChoice&) const = default;
};

// What the engine is opened with; the subset of EngineSettings the app exposes.
struct LoadRequest {
  QString modelDir;
  int threads = 0;               // 0: all cores
  qint64 memoryBudgetBytes = 0;  // 0: no budget (every expert resident)
  QString kvPrecision = QStringLiteral("f32");
  QString dataDir;  // expert usage history lives here
  QString io = QStringLiteral("direct");        // "direct", "buffered", "uring"
  QString kernelPath = QStringLiteral("auto");  // "auto" or "dequantize"
  TierChoice tiers;
  int sessions = 1;  // generating at once: the chat, plus the API server's slots when it is on
};

// Speculative decoding as the app offers it: every drafter self-tuning (Auto) or all off, and
// the MTP head's draft length. Applied live (the engine's setSpeculation), no reload.
struct SpeculationChoice {
  bool automatic = true;
  int mtpDepth = 3;  // 1..8
  bool operator==(const SpeculationChoice&) const = default;
};

// The OpenAI-compatible server as the app runs it (its other settings are ServerSettings'
// defaults). The app offers loopback only.
struct ServerRequest {
  QString host = QStringLiteral("127.0.0.1");
  int port = 8080;    // 0: any free port
  QString apiKey;     // empty: no authentication
  int slotCount = 2;  // requests generating at once
  bool operator==(const ServerRequest&) const = default;
};

// What the server is doing: running at `url`, or not, with the reason when a start failed.
struct ServerState {
  bool running = false;
  QString url;    // "http://127.0.0.1:8080" while running
  QString error;  // why the last start failed; empty when it did not
  bool operator==(const ServerState&) const = default;
};

struct ModelSummary {
  QString directory;
  QString name;  // the folder's name
  int layers = 0;
  int vocabSize = 0;
  qint64 residentBytes = 0;
  bool streaming = false;
  double loadSeconds = 0;
};

struct PromptMessage {
  QString role;  // "system", "user", "assistant"
  QString content;
  QString thinking;
};

struct GenerateRequest {
  quint64 id = 0;
  QString kvFile;  // where the session is saved after the reply; empty: not saved
  QList<PromptMessage> messages;
  bool thinking = true;
  float temperature = 0.7f;
  float topP = 0.95f;
  int topK = 0;
  int maxTokens = 512;
};

struct ReplyOutcome {
  quint64 id = 0;
  QString text;          // the whole generated text (thinking included)
  QString finishReason;  // "stop", "length", "cancelled"
  int tokens = 0;
  qint64 promptTokens = 0;
  qint64 reusedTokens = 0;
  double prefillSeconds = 0;
  double tokensPerSecond = 0;
  // Speculation in this reply: forward passes after the prompt, draft tokens proposed, kept.
  qint64 forwards = 0;
  qint64 drafted = 0;
  qint64 accepted = 0;
  double tokensPerPass = 0;  // tokens per forward pass (1 without speculation; 0: no pass)
};

// One tier snapshot, flattened for the GUI: heat and tier are [layers x experts] row-major.
struct TierData {
  bool streaming = false;
  int layers = 0;
  int experts = 0;
  QVector<int> layerIds;  // the model's layer index of each row (empty: unknown)
  QVector<float> heat;
  QVector<quint8> tiers;  // strata::ExpertTier values
  double hitRate = 0;
  qint64 pinnedBytes = 0, pinnedBudget = 0;
  qint64 cacheBytes = 0, cacheBudget = 0;
  qint64 residentBytes = 0;
  qint64 pageCacheBytes = -1, pageCacheTotal = 0;  // experts in the OS page cache; -1: unknown
  qint64 bytesRead = 0;     // experts read from disk since the model was opened
  double readSeconds = 0;   // time spent reading them (I/O threads' read batches)
  // The chat's KV cache: its tokens, its bytes (every layer's, the MTP layer's included), and
  // what the memory plan reserves for one conversation (contextTokens of them).
  qint64 kvTokens = 0;
  qint64 kvBytes = 0;
  qint64 kvReservedBytes = 0;
};

// One token row and the experts each MoE layer sent it to (strata::RoutedToken).
struct RoutedTokenData {
  QString text;            // the token as text, whitespace made visible
  qint64 step = 0;         // the forward step that computed it
  qint64 position = 0;     // its position in its conversation
  QVector<int> experts;    // [layers x expertsPerToken], each layer's by descending gate weight
  QVector<float> weights;  // their gate weights
  bool operator==(const RoutedTokenData&) const = default;
};

// The router's latest choices (strata::RoutingSnapshot without the heat, which TierData has).
struct RoutingData {
  QVector<int> layers;  // the model's MoE layer indices, in the order of each token's experts
  int expertsPerToken = 0;
  QList<RoutedTokenData> trail;  // oldest first
  bool operator==(const RoutingData&) const = default;
};

// One drafter's state (strata::DrafterStats), for the Inside panel.
struct DrafterData {
  QString name;  // "mtp", "ngram", "grammar"
  QString mode;  // "auto", "on", "off"
  bool active = false;
  qint64 rounds = 0;
  qint64 drafted = 0;
  qint64 accepted = 0;
  qint64 firstAccepted = 0;
  double acceptance = 0;  // of the first draft token per round
  double tokensPerForward = 0;
  double speedup = 0;  // measured; 0: unknown
  int depth = 0;       // MTP, n-grams: the longest draft it makes now; grammar 0
  bool operator==(const DrafterData&) const = default;
};

// Every drafter the model has (no "mtp" without an MTP layer), in the engine's order.
struct SpeculationData {
  QList<DrafterData> drafters;
  bool operator==(const SpeculationData&) const = default;
};

}  // namespace strata::app

Q_DECLARE_METATYPE(strata::app::LoadRequest)
Q_DECLARE_METATYPE(strata::app::TierChoice)
Q_DECLARE_METATYPE(strata::app::ModelSummary)
Q_DECLARE_METATYPE(strata::app::GenerateRequest)
Q_DECLARE_METATYPE(strata::app::ReplyOutcome)
Q_DECLARE_METATYPE(strata::app::TierData)
Q_DECLARE_METATYPE(strata::app::RoutingData)
Q_DECLARE_METATYPE(strata::app::SpeculationChoice)
Q_DECLARE_METATYPE(strata::app::SpeculationData)
Q_DECLARE_METATYPE(strata::app::ServerRequest)
Q_DECLARE_METATYPE(strata::app::ServerState)
