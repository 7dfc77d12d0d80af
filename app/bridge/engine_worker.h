#pragma once
// The engine's home: lives on the bridge's worker thread and is only ever called through
// queued signals, so the Engine and its Session are used by that one thread. Results go back
// as queued signals carrying plain values (bridge_types.h).
#include <QElapsedTimer>
#include <QObject>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>

#include "bridge/bridge_types.h"
#include "bridge/local_server.h"

namespace strata {
class Engine;
class Session;
}  // namespace strata

namespace strata::app {

class EngineWorker : public QObject {
  Q_OBJECT
 public:
  // `cancel` is owned by the bridge and set from the GUI thread to stop a reply.
  explicit EngineWorker(const std::atomic<bool>* cancel);
  ~EngineWorker() override;

  // Thread-safe, called on the GUI thread: not a queued slot, so that a change reaches the
  // engine during a reply (the worker applies it at the next token), not after it.
  void requestSpeculation(const SpeculationChoice& choice);
  // The same for the expert tiers' pinned share and prefetching (a streaming model only).
  void requestTiers(const TierChoice& choice);

 public slots:
  void load(const strata::app::LoadRequest& request);
  // Starts a conversation: resumes its saved KV cache when `kvFile` holds a usable one.
  void openConversation(const QString& kvFile);
  void generate(const strata::app::GenerateRequest& request);
  // Forgets the session if it belongs to `kvFile` and removes the file (a deleted chat).
  void discardConversation(const QString& kvFile);
  void setThreads(int threads);
  // Serves the loaded model over the OpenAI-compatible API. Without a model the request is
  // kept, and the server starts when one loads; loading another model restarts it.
  void startServer(const strata::app::ServerRequest& request);
  void stopServer();
  // Applies what requestSpeculation/requestTiers asked for (also called at every token).
  void applyLiveSettings();

 signals:
  void loaded(const strata::app::ModelSummary& summary);
  void loadFailed(const QString& message);
  void conversationResumed(const QString& kvFile, qint64 tokens, double milliseconds);
  void resumeFailed(const QString& kvFile, const QString& message);
  // The prompt's tokens evaluated so far (reused ones included) of `total`; ends at total.
  void prefillProgress(quint64 id, qint64 done, qint64 total);
  void replyDelta(quint64 id, const QString& text, int tokens, double tokensPerSecond);
  void replyFinished(const strata::app::ReplyOutcome& outcome);
  void replyFailed(quint64 id, const QString& message);
  void tierData(const strata::app::TierData& data);
  void routingData(const strata::app::RoutingData& data);
  void speculationData(const strata::app::SpeculationData& data);
  // Something went wrong that does not end the reply (the KV file could not be saved).
  void warning(const QString& message);
  void serverState(const strata::app::ServerState& state);

 private:
  void publishStats();      // tier and routing snapshots, speculation stats
  void saveSession(const QString& kvFile);
  void startWantedServer();  // the requested server over the current engine, if both exist

  const std::atomic<bool>* cancel_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<Session> session_;
  QString sessionFile_;  // the KV file the session belongs to (empty: none yet)
  qint64 kvReservedBytes_ = 0;  // the memory plan's KV cache for one conversation
  QString modelId_;      // the model folder's name: what API clients ask for
  // Declared after engine_, so destroyed before it (the destructor also stops it first).
  LocalServer server_;
  std::optional<ServerRequest> serverWanted_;  // set while the user wants the server on
  QElapsedTimer sinceStats_;

  std::mutex speculationMutex_;
  SpeculationChoice speculation_;                // guarded by speculationMutex_
  std::atomic<bool> speculationChanged_{false};  // set with it, cleared when applied
  TierChoice tiers_;                             // guarded by speculationMutex_
  std::atomic<bool> tiersChanged_{false};
};

}  // namespace strata::app
