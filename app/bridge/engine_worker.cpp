#include "bridge/engine_worker.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <algorithm>

#include "bridge/load_settings.h"
#include "bridge/progress_throttle.h"
#include "bridge/text_coalescer.h"
#include "strata/chat.h"
#include "strata/engine.h"

namespace strata::app {
namespace {

constexpr int kStatsIntervalMs = 150;  // about 7 snapshots a second while generating
// Prompts are evaluated in chunks this long: a progress bar moves and Stop is seen between
// them. Chunks are not free: each re-reads the weights (streamed experts not in the cache
// included), and on the tiny model a 732-token prompt took about twice as long in chunks of 64
// as in one step. 256, as the server uses: a few seconds per chunk for a big model on a CPU.
constexpr int kProgressChunkTokens = 256;
constexpr int kPrefillProgressIntervalMs = 50;  // at most 20 updates a second

std::filesystem::path toPath(const QString& path) {
  return std::filesystem::path(path.toStdString());
}

std::vector<ChatMessage> toChatMessages(const QList<PromptMessage>& messages) {
  std::vector<ChatMessage> out;
  for (const PromptMessage& m : messages) {
    ChatMessage c;
    if (m.role == QLatin1String("system"))
      c.role = ChatRole::System;
    else if (m.role == QLatin1String("assistant"))
      c.role = ChatRole::Assistant;
    else
      c.role = ChatRole::User;
    c.content = m.content.toStdString();
    if (c.role == ChatRole::Assistant) c.reasoningContent = m.thinking.toStdString();
    out.push_back(std::move(c));
  }
  return out;
}

TierData toTierData(const TierSnapshot& s) {
  TierData d;
  d.streaming = s.streaming;
  d.layers = static_cast<int>(s.layers.size());
  d.experts = s.expertsPerLayer;
  d.layerIds = QVector<int>(s.layers.begin(), s.layers.end());
  d.heat = QVector<float>(s.heat.begin(), s.heat.end());
  d.tiers.reserve(static_cast<qsizetype>(s.tiers.size()));
  for (ExpertTier t : s.tiers) d.tiers.push_back(static_cast<quint8>(t));
  d.hitRate = s.counters.hitRate();
  d.pinnedBytes = s.pinnedBytes;
  d.pinnedBudget = s.pinnedBudget;
  d.cacheBytes = s.cacheBytes;
  d.cacheBudget = s.cacheBudget;
  d.residentBytes = s.residentBytes;
  d.pageCacheBytes = s.pageCacheBytes;
  d.pageCacheTotal = s.pageCacheTotal;
  d.bytesRead = s.counters.bytesRead;
  d.readSeconds = s.counters.readSeconds;
  return d;
}

// A token as a label: its text, with line breaks, tabs and an all-blank token made visible.
QString tokenLabel(const Tokenizer* tokenizer, int32_t token) {
  if (!tokenizer) return QStringLiteral("#%1").arg(token);
  QString text = QString::fromStdString(tokenizer->decode(std::span<const int32_t>(&token, 1)));
  text.replace(QLatin1Char('\n'), QChar(0x21B5)).replace(QLatin1Char('\t'), QChar(0x2192));
  return text.trimmed().isEmpty() ? QString(text.size(), QChar(0x2423)) : text;
}

RoutingData toRoutingData(const RoutingSnapshot& s, const Tokenizer* tokenizer) {
  RoutingData d;
  d.layers = QVector<int>(s.layers.begin(), s.layers.end());
  d.expertsPerToken = s.expertsPerToken;
  for (const RoutedToken& t : s.trail)
    d.trail.push_back({tokenLabel(tokenizer, t.token), t.step, t.position,
                       QVector<int>(t.experts.begin(), t.experts.end()),
                       QVector<float>(t.weights.begin(), t.weights.end())});
  return d;
}

SpeculationSettings toSpeculationSettings(const SpeculationChoice& c) {
  SpeculationSettings s;
  const DrafterMode mode = c.automatic ? DrafterMode::Auto : DrafterMode::Off;
  s.mtp = s.ngram = s.grammar = mode;
  s.mtpDepth = std::clamp(c.mtpDepth, 1, 8);
  return s;
}

QString modeName(DrafterMode mode) {
  switch (mode) {
    case DrafterMode::Auto:
      return QStringLiteral("auto");
    case DrafterMode::On:
      return QStringLiteral("on");
    case DrafterMode::Off:
      return QStringLiteral("off");
  }
  return {};
}

SpeculationData toSpeculationData(const std::vector<DrafterStats>& stats) {
  SpeculationData d;
  for (const DrafterStats& s : stats) {
    DrafterData x;
    x.name = QString::fromStdString(s.name);
    x.mode = modeName(s.mode);
    x.active = s.active;
    x.rounds = s.rounds;
    x.drafted = s.drafted;
    x.accepted = s.accepted;
    x.firstAccepted = s.firstAccepted;
    x.acceptance = s.acceptance;
    x.tokensPerForward = s.tokensPerForward;
    x.speedup = s.speedup;
    x.depth = s.depth;
    d.drafters.append(x);
  }
  return d;
}

QString serverUrl(const QString& host, int port) {
  const QString h = host.contains(QLatin1Char(':')) ? QStringLiteral("[%1]").arg(host) : host;
  return QStringLiteral("http://%1:%2").arg(h).arg(port);
}

}  // namespace

EngineWorker::EngineWorker(const std::atomic<bool>* cancel) : cancel_(cancel) {}

EngineWorker::~EngineWorker() {
  server_.stop();  // its slots' sessions belong to the engine
}

void EngineWorker::requestSpeculation(const SpeculationChoice& choice) {
  std::lock_guard lock(speculationMutex_);
  speculation_ = choice;
  speculationChanged_.store(true);
}

void EngineWorker::requestTiers(const TierChoice& choice) {
  std::lock_guard lock(speculationMutex_);
  tiers_ = choice;
  tiersChanged_.store(true);
}

void EngineWorker::applyLiveSettings() {
  if (!engine_) return;
  if (speculationChanged_.exchange(false)) {
    SpeculationChoice choice;
    {
      std::lock_guard lock(speculationMutex_);
      choice = speculation_;
    }
    engine_->setSpeculation(toSpeculationSettings(choice));
  }
  if (tiersChanged_.exchange(false)) {
    TierChoice choice;
    {
      std::lock_guard lock(speculationMutex_);
      choice = tiers_;
    }
    // The plan's expert memory (pinned set + cache) stays; only its split and prefetch change.
    const TierSnapshot now = engine_->tierSnapshot();
    if (!now.streaming) return;
    const int64_t experts = now.pinnedBudget + now.cacheBudget;
    TierTuning tuning;
    tuning.pinnedBytes = experts * std::clamp(choice.pinnedPercent, 0, 90) / 100;
    tuning.cacheBytes = experts - tuning.pinnedBytes;
    tuning.prefetch = choice.prefetch;
    engine_->retune(tuning);
    publishStats();
  }
}

void EngineWorker::load(const LoadRequest& request) {
  if (server_.running() || serverWanted_) {
    server_.stop();  // before its engine goes; restarted over the new one below
    emit serverState({});
  }
  session_.reset();
  sessionFile_.clear();
  engine_.reset();  // the old model's memory goes before the new one's arrives
  QElapsedTimer timer;
  timer.start();
  try {
    EngineSettings settings = engineSettingsFor(request);
    {
      std::lock_guard lock(speculationMutex_);
      settings.speculation = toSpeculationSettings(speculation_);
      speculationChanged_.store(false);
      tiers_ = request.tiers;
      tiersChanged_.store(false);
    }
    auto engine = Engine::open(toPath(request.modelDir), settings);
    kvReservedBytes_ = engine->info().plan.kvBytesPerToken * settings.memory.contextTokens;
    if (!engine->tokenizer())
      throw Error(request.modelDir.toStdString() +
                  ": no tokenizer.json, so there is no text to chat with");
    engine_ = std::move(engine);
  } catch (const std::exception& e) {
    emit loadFailed(QString::fromStdString(e.what()));
    return;
  }
  const ModelInfo& info = engine_->info();
  ModelSummary summary;
  summary.directory = request.modelDir;
  summary.name = QFileInfo(QDir::cleanPath(request.modelDir)).fileName();  // "dir/" too
  summary.layers = info.layerCount;
  summary.vocabSize = info.vocabSize;
  summary.residentBytes = info.residentBytes;
  summary.streaming = info.plan.streaming;
  summary.loadSeconds = timer.elapsed() / 1000.0;
  modelId_ = summary.name;
  emit loaded(summary);
  publishStats();
  startWantedServer();
}

void EngineWorker::openConversation(const QString& kvFile) {
  session_.reset();
  sessionFile_ = kvFile;
  if (!engine_ || kvFile.isEmpty() || !QFileInfo::exists(kvFile)) {
    publishStats();  // no cache (yet) for this conversation
    return;
  }
  QElapsedTimer timer;
  timer.start();
  try {
    session_ = engine_->resumeSession(toPath(kvFile));
    emit conversationResumed(kvFile, static_cast<qint64>(session_->tokens().size()),
                             timer.nsecsElapsed() / 1e6);
  } catch (const std::exception& e) {
    // The next reply recomputes the conversation from its text.
    emit resumeFailed(kvFile, QString::fromStdString(e.what()));
  }
  publishStats();  // the KV gauge shows the opened conversation's cache
}

void EngineWorker::generate(const GenerateRequest& request) {
  if (!engine_) {
    emit replyFailed(request.id, tr("No model is loaded."));
    return;
  }
  if (!session_ || sessionFile_ != request.kvFile) {
    session_ = engine_->newSession();
    sessionFile_ = request.kvFile;
  }
  try {
    ChatOptions chat;
    chat.addGenerationPrompt = true;
    chat.enableThinking = request.thinking;
    const std::string prompt = renderGlmChat(toChatMessages(request.messages), {}, chat);
    const std::vector<int32_t> ids = engine_->tokenizer()->encode(prompt);

    GenerateOptions options;
    options.sampling.temperature = request.temperature;
    options.sampling.topP = request.topP;
    options.sampling.topK = request.topK;
    options.maxNewTokens = request.maxTokens;
    options.cancel = cancel_;
    options.prefillChunkTokens = kProgressChunkTokens;
    ProgressThrottle throttle(kPrefillProgressIntervalMs);
    QElapsedTimer clock;
    clock.start();
    options.onPrefillProgress = [&](int64_t done, int64_t total) {
      if (throttle.allow(done, total, clock.elapsed()))
        emit prefillProgress(request.id, done, total);
    };

    TextCoalescer coalescer;
    int tokens = 0;
    QElapsedTimer sinceFirst;
    auto rate = [&] {
      return tokens > 1 && sinceFirst.isValid() ? (tokens - 1) / (sinceFirst.nsecsElapsed() / 1e9)
                                                : 0.0;
    };
    applyLiveSettings();
    sinceStats_.start();
    const GenerateResult r = session_->generate(
        ids, options,
        [&](std::string_view text) {
          if (coalescer.add(QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()))))
            emit replyDelta(request.id, coalescer.take(), tokens, rate());
        },
        [&](int32_t) {
          if (!sinceFirst.isValid()) sinceFirst.start();
          ++tokens;
          applyLiveSettings();
          if (sinceStats_.elapsed() >= kStatsIntervalMs) publishStats();
        });
    if (!coalescer.isEmpty()) emit replyDelta(request.id, coalescer.take(), tokens, rate());

    ReplyOutcome outcome;
    outcome.id = request.id;
    outcome.text = QString::fromStdString(r.text);
    outcome.finishReason = QString::fromStdString(r.finishReason);
    outcome.tokens = static_cast<int>(r.tokens.size());
    outcome.promptTokens = r.promptTokens;
    outcome.reusedTokens = r.reusedTokens;
    outcome.prefillSeconds = r.prefillSeconds;
    outcome.tokensPerSecond =
        r.decodeSeconds > 0 ? static_cast<double>(r.tokens.size() - 1) / r.decodeSeconds : 0.0;
    outcome.forwards = r.speculation.forwards;
    outcome.drafted = r.speculation.drafted;
    outcome.accepted = r.speculation.accepted;
    outcome.tokensPerPass = r.speculation.tokensPerForward();
    publishStats();
    emit replyFinished(outcome);
  } catch (const std::exception& e) {
    session_.reset();  // its KV cache may be half-written; the next reply starts afresh
    emit replyFailed(request.id, QString::fromStdString(e.what()));
    return;
  }
  saveSession(request.kvFile);
}

void EngineWorker::saveSession(const QString& kvFile) {
  if (kvFile.isEmpty() || !session_) return;
  try {
    QDir().mkpath(QFileInfo(kvFile).absolutePath());
    session_->save(toPath(kvFile));
  } catch (const std::exception& e) {
    emit warning(
        tr("The conversation's KV cache was not saved (%1); reopening it will recompute it.")
            .arg(QString::fromStdString(e.what())));
  }
}

void EngineWorker::discardConversation(const QString& kvFile) {
  if (sessionFile_ == kvFile) {
    session_.reset();
    sessionFile_.clear();
    publishStats();
  }
  if (!kvFile.isEmpty()) QFile::remove(kvFile);
}

void EngineWorker::setThreads(int threads) {
  if (engine_) engine_->setThreads(threads);
}

void EngineWorker::startServer(const ServerRequest& request) {
  if (server_.running() && serverWanted_ == request) {  // nothing changed: keep its clients
    emit serverState({true, serverUrl(request.host, server_.port()), {}});
    return;
  }
  serverWanted_ = request;
  startWantedServer();
}

void EngineWorker::stopServer() {
  serverWanted_.reset();
  server_.stop();
  emit serverState({});
}

void EngineWorker::startWantedServer() {
  server_.stop();
  if (!serverWanted_) return;
  if (!engine_) {
    emit serverState({});  // it waits for a model
    return;
  }
  server::ServerSettings settings;
  settings.host = serverWanted_->host.toStdString();
  settings.port = serverWanted_->port;
  settings.apiKey = serverWanted_->apiKey.toStdString();
  settings.slotCount = std::max(1, serverWanted_->slotCount);
  settings.modelId = modelId_.toStdString();
  const std::string error = server_.start(*engine_, settings);
  if (!error.empty()) {
    emit serverState({false, {}, tr("Not started: %1").arg(QString::fromStdString(error))});
    return;
  }
  emit serverState({true, serverUrl(serverWanted_->host, server_.port()), {}});
}

void EngineWorker::publishStats() {
  sinceStats_.start();
  if (!engine_) return;
  TierData tiers = toTierData(engine_->tierSnapshot());
  if (session_) {  // called between steps on this thread: the session is not changing now
    tiers.kvTokens = session_->length();
    tiers.kvBytes = session_->kvBytes();
  }
  tiers.kvReservedBytes = kvReservedBytes_;
  emit tierData(tiers);
  // The routing view follows the chat's own tokens (API clients may decode beside it); with
  // no chat session yet, whatever the model computes.
  const RoutingSnapshot routing = session_ ? engine_->routingSnapshot(*session_) : engine_->routingSnapshot();
  emit routingData(toRoutingData(routing, engine_->tokenizer()));
  emit speculationData(toSpeculationData(engine_->speculationStats()));
}

}  // namespace strata::app
