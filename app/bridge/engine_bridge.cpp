#include "bridge/engine_bridge.h"

#include "bridge/engine_worker.h"

namespace strata::app {

EngineBridge::EngineBridge(QObject* parent) : QObject(parent), worker_(new EngineWorker(&cancel_)) {
  qRegisterMetaType<LoadRequest>();
  qRegisterMetaType<ModelSummary>();
  qRegisterMetaType<GenerateRequest>();
  qRegisterMetaType<ReplyOutcome>();
  qRegisterMetaType<TierData>();
  qRegisterMetaType<RoutingData>();
  qRegisterMetaType<SpeculationData>();
  qRegisterMetaType<ServerRequest>();
  qRegisterMetaType<ServerState>();
  thread_.setObjectName(QStringLiteral("strata-engine"));
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);

  connect(this, &EngineBridge::requestLoad, worker_, &EngineWorker::load);
  connect(this, &EngineBridge::requestOpenConversation, worker_, &EngineWorker::openConversation);
  connect(this, &EngineBridge::requestGenerate, worker_, &EngineWorker::generate);
  connect(this, &EngineBridge::requestDiscard, worker_, &EngineWorker::discardConversation);
  connect(this, &EngineBridge::requestThreads, worker_, &EngineWorker::setThreads);
  connect(this, &EngineBridge::requestStartServer, worker_, &EngineWorker::startServer);
  connect(this, &EngineBridge::requestStopServer, worker_, &EngineWorker::stopServer);

  connect(worker_, &EngineWorker::loaded, this, [this](const ModelSummary& s) {
    summary_ = s;
    loadError_.clear();
    setState(State::Ready);
    emit loaded(s);
  });
  connect(worker_, &EngineWorker::loadFailed, this, [this](const QString& message) {
    summary_ = {};
    loadError_ = message;
    setState(State::Failed);
    emit loadFailed(message);
  });
  connect(worker_, &EngineWorker::conversationResumed, this, &EngineBridge::conversationResumed);
  connect(worker_, &EngineWorker::resumeFailed, this, &EngineBridge::resumeFailed);
  connect(worker_, &EngineWorker::tierData, this, &EngineBridge::tierData);
  connect(worker_, &EngineWorker::routingData, this, &EngineBridge::routingData);
  connect(worker_, &EngineWorker::speculationData, this, &EngineBridge::speculationData);
  connect(worker_, &EngineWorker::warning, this, &EngineBridge::warning);
  connect(worker_, &EngineWorker::serverState, this, [this](const ServerState& state) {
    if (state == server_) return;
    server_ = state;
    emit serverChanged();
  });
  connect(worker_, &EngineWorker::prefillProgress, this,
          [this](quint64 id, qint64 done, qint64 total) {
            if (id == lastId_) emit prefillProgress(id, done, total);
          });
  connect(worker_, &EngineWorker::replyDelta, this,
          [this](quint64 id, const QString& text, int tokens, double rate) {
            if (id == lastId_) emit replyDelta(id, text, tokens, rate);
          });
  connect(worker_, &EngineWorker::replyFinished, this, [this](const ReplyOutcome& outcome) {
    if (outcome.id == lastId_) setGenerating(false);
    emit replyFinished(outcome);
  });
  connect(worker_, &EngineWorker::replyFailed, this, [this](quint64 id, const QString& message) {
    if (id == lastId_) setGenerating(false);
    emit replyFailed(id, message);
  });
  thread_.start();
}

EngineBridge::~EngineBridge() {
  cancel_.store(true);  // a reply in progress ends at its next token
  thread_.quit();
  thread_.wait();
}

void EngineBridge::load(const LoadRequest& request) {
  cancel_.store(true);
  setState(State::Loading);
  emit requestLoad(request);
}

void EngineBridge::openConversation(const QString& kvFile) { emit requestOpenConversation(kvFile); }

quint64 EngineBridge::generate(GenerateRequest request) {
  // Reset here, not on the worker: a stop pressed before the worker starts still counts.
  cancel_.store(false);
  request.id = ++lastId_;
  setGenerating(true);
  emit replyStarted(request.id);
  emit requestGenerate(request);
  return request.id;
}

void EngineBridge::discardConversation(const QString& kvFile) { emit requestDiscard(kvFile); }

void EngineBridge::setThreads(int threads) { emit requestThreads(threads); }

void EngineBridge::setSpeculation(const SpeculationChoice& choice) {
  worker_->requestSpeculation(choice);  // thread-safe; see EngineWorker::requestSpeculation
}

void EngineBridge::setTiers(const TierChoice& choice) {
  worker_->requestTiers(choice);  // thread-safe, as requestSpeculation
  // Idle, nothing calls it at a token: apply it now (queued after any running reply).
  QMetaObject::invokeMethod(worker_, &EngineWorker::applyLiveSettings, Qt::QueuedConnection);
}

void EngineBridge::startServer(const ServerRequest& request) { emit requestStartServer(request); }

void EngineBridge::stopServer() { emit requestStopServer(); }

void EngineBridge::stop() { cancel_.store(true); }

void EngineBridge::setState(State state) {
  // Always notifies: the model name and the error change with it even when the state does not.
  state_ = state;
  emit stateChanged();
}

void EngineBridge::setGenerating(bool generating) {
  if (generating_ == generating) return;
  generating_ = generating;
  emit generatingChanged();
}

}  // namespace strata::app
