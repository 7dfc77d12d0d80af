#pragma once
// The GUI thread's handle on the engine: starts the worker thread, forwards requests to the
// EngineWorker as queued calls and re-emits its results on the GUI thread. Stop is an atomic
// flag the worker's generate loop reads, not a queued call (the worker is busy generating).
#include <QtQml/qqmlregistration.h>

#include <QObject>
#include <QThread>
#include <atomic>

#include "bridge/bridge_types.h"

namespace strata::app {

class EngineWorker;

class EngineBridge : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("owned by the app")
  Q_PROPERTY(State state READ state NOTIFY stateChanged)
  Q_PROPERTY(bool generating READ generating NOTIFY generatingChanged)
  Q_PROPERTY(QString modelName READ modelName NOTIFY stateChanged)
  Q_PROPERTY(QString loadError READ loadError NOTIFY stateChanged)
  // The OpenAI-compatible server over the loaded model.
  Q_PROPERTY(bool serverRunning READ serverRunning NOTIFY serverChanged)
  Q_PROPERTY(QString serverUrl READ serverUrl NOTIFY serverChanged)
  Q_PROPERTY(QString serverError READ serverError NOTIFY serverChanged)

 public:
  enum class State { Empty, Loading, Ready, Failed };
  Q_ENUM(State)

  explicit EngineBridge(QObject* parent = nullptr);
  ~EngineBridge() override;

  State state() const { return state_; }
  bool generating() const { return generating_; }
  QString modelName() const { return summary_.name; }
  QString loadError() const { return loadError_; }
  const ModelSummary& summary() const { return summary_; }
  bool serverRunning() const { return server_.running; }
  QString serverUrl() const { return server_.url; }
  QString serverError() const { return server_.error; }

  void load(const LoadRequest& request);
  void openConversation(const QString& kvFile);
  // Returns the request's id; replyDelta/replyFinished/replyFailed carry it.
  quint64 generate(GenerateRequest request);
  void discardConversation(const QString& kvFile);
  void setThreads(int threads);
  // Applied live: a reply in progress switches at its next token.
  void setSpeculation(const SpeculationChoice& choice);
  // Pinned share and prefetching of a streaming model, applied at its next token.
  void setTiers(const TierChoice& choice);
  // The server starts once a model is loaded (at once if one is), and again after a reload;
  // a start with other settings restarts it. serverChanged reports the outcome.
  void startServer(const ServerRequest& request);
  void stopServer();
  Q_INVOKABLE void stop();

 signals:
  void stateChanged();
  void generatingChanged();
  void loaded(const strata::app::ModelSummary& summary);
  void loadFailed(const QString& message);
  void conversationResumed(const QString& kvFile, qint64 tokens, double milliseconds);
  void resumeFailed(const QString& kvFile, const QString& message);
  void replyStarted(quint64 id);  // generate() asked for it
  // While the reply's prompt is read: tokens evaluated so far (reused ones included) of
  // `total`, at most ~20 times a second and always at total.
  void prefillProgress(quint64 id, qint64 done, qint64 total);
  void replyDelta(quint64 id, const QString& text, int tokens, double tokensPerSecond);
  void replyFinished(const strata::app::ReplyOutcome& outcome);
  void replyFailed(quint64 id, const QString& message);
  void tierData(const strata::app::TierData& data);
  void routingData(const strata::app::RoutingData& data);
  // With every tier snapshot (a few times a second while generating, and after each reply).
  void speculationData(const strata::app::SpeculationData& data);
  void warning(const QString& message);
  void serverChanged();

  // To the worker (queued: they run on the worker thread, in order).
  void requestLoad(const strata::app::LoadRequest& request);
  void requestOpenConversation(const QString& kvFile);
  void requestGenerate(const strata::app::GenerateRequest& request);
  void requestDiscard(const QString& kvFile);
  void requestThreads(int threads);
  void requestStartServer(const strata::app::ServerRequest& request);
  void requestStopServer();

 private:
  void setState(State state);
  void setGenerating(bool generating);

  std::atomic<bool> cancel_{false};
  QThread thread_;
  EngineWorker* worker_;  // lives on thread_, deleted when it finishes
  State state_ = State::Empty;
  bool generating_ = false;
  quint64 lastId_ = 0;
  ModelSummary summary_;
  QString loadError_;
  ServerState server_;
};

}  // namespace strata::app
