#include "bridge/engine_worker.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include "bridge/text_coalescer.h"
#include "strata/chat.h"
#include "strata/engine.h"

namespace strata::app {
namespace {

constexpr int kTierIntervalMs = 150;  // about 7 snapshots a second while generating

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
  d.heat = QVector<float>(s.heat.begin(), s.heat.end());
  d.tiers.reserve(static_cast<qsizetype>(s.tiers.size()));
  for (ExpertTier t : s.tiers) d.tiers.push_back(static_cast<quint8>(t));
  d.hitRate = s.counters.hitRate();
  d.pinnedBytes = s.pinnedBytes;
  d.pinnedBudget = s.pinnedBudget;
  d.cacheBytes = s.cacheBytes;
  d.cacheBudget = s.cacheBudget;
  d.residentBytes = s.residentBytes;
  d.bytesRead = s.counters.bytesRead;
  return d;
}

}  // namespace

EngineWorker::EngineWorker(const std::atomic<bool>* cancel) : cancel_(cancel) {}
EngineWorker::~EngineWorker() = default;

void EngineWorker::load(const LoadRequest& request) {
  session_.reset();
  sessionFile_.clear();
  engine_.reset();  // the old model's memory goes before the new one's arrives
  QElapsedTimer timer;
  timer.start();
  try {
    EngineSettings settings;
    settings.threads = request.threads;
    settings.memory.budgetBytes = request.memoryBudgetBytes;
    if (!request.dataDir.isEmpty()) settings.memory.dataDirectory = toPath(request.dataDir);
    if (auto kv = parseKvPrecision(request.kvPrecision.toStdString())) settings.kvPrecision = *kv;
    auto engine = Engine::open(toPath(request.modelDir), settings);
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
  summary.name = QFileInfo(request.modelDir).fileName();
  summary.layers = info.layerCount;
  summary.vocabSize = info.vocabSize;
  summary.residentBytes = info.residentBytes;
  summary.streaming = info.plan.streaming;
  summary.loadSeconds = timer.elapsed() / 1000.0;
  emit loaded(summary);
  publishTiers();
}

void EngineWorker::openConversation(const QString& kvFile) {
  session_.reset();
  sessionFile_ = kvFile;
  if (!engine_ || kvFile.isEmpty() || !QFileInfo::exists(kvFile)) return;
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

    TextCoalescer coalescer;
    int tokens = 0;
    QElapsedTimer sinceFirst;
    auto rate = [&] {
      return tokens > 1 && sinceFirst.isValid() ? (tokens - 1) / (sinceFirst.nsecsElapsed() / 1e9)
                                                : 0.0;
    };
    sinceTiers_.start();
    const GenerateResult r = session_->generate(
        ids, options,
        [&](std::string_view text) {
          if (coalescer.add(QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()))))
            emit replyDelta(request.id, coalescer.take(), tokens, rate());
        },
        [&](int32_t) {
          if (!sinceFirst.isValid()) sinceFirst.start();
          ++tokens;
          if (sinceTiers_.elapsed() >= kTierIntervalMs) publishTiers();
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
    publishTiers();
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
  }
  if (!kvFile.isEmpty()) QFile::remove(kvFile);
}

void EngineWorker::setThreads(int threads) {
  if (engine_) engine_->setThreads(threads);
}

void EngineWorker::publishTiers() {
  sinceTiers_.start();
  if (engine_) emit tierData(toTierData(engine_->tierSnapshot()));
}

}  // namespace strata::app
