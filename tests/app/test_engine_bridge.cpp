// The engine bridge with the bundled tiny model: a reply streams in as coalesced deltas, stop
// works, sessions are saved and resumed, bad input gives error signals (never a crash), the
// speculative decoding setting reaches the engine live, with its stats published, and a long
// prompt is read in chunks with its progress reported (Stop is seen between chunks). A streaming
// model's pinned share of the expert memory changes live.
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "bridge/engine_bridge.h"
#include "bridge/load_settings.h"
#include "strata/convert.h"
#include "strata/engine.h"

using namespace strata::app;

namespace {

GenerateRequest capitalQuestion(const QString& kvFile = {}) {
  GenerateRequest r;
  r.messages.append({QStringLiteral("user"), QStringLiteral("What is the capital of France?"), {}});
  r.kvFile = kvFile;
  r.thinking = false;
  r.temperature = 0;  // greedy: the same reply every run
  r.maxTokens = 64;
  return r;
}

// A prompt long enough for several prefill chunks (the tiny model's context is 1024 tokens).
GenerateRequest longQuestion() {
  GenerateRequest r = capitalQuestion();
  QString text;
  for (int i = 0; i < 30; ++i)
    text += QStringLiteral("The quick brown fox jumps over the lazy dog number %1. ").arg(i);
  r.messages.first().content = text + QStringLiteral("What is the capital of France?");
  r.maxTokens = 8;
  return r;
}

const DrafterData* drafter(const SpeculationData& data, const QString& name) {
  for (const DrafterData& d : data.drafters)
    if (d.name == name) return &d;
  return nullptr;
}

QStringList drafterNames(const SpeculationData& data) {
  QStringList names;
  for (const DrafterData& d : data.drafters) names << d.name;
  return names;
}

LoadRequest tinyModel() {
  LoadRequest r;
  r.modelDir = QStringLiteral(STRATA_TINY_MODEL_DIR);
  r.threads = 2;
  return r;
}

}  // namespace

class TestEngineBridge : public QObject {
  Q_OBJECT
 private slots:
  void badModelFolderGivesAnErrorSignal() {
    EngineBridge bridge;
    QSignalSpy failed(&bridge, &EngineBridge::loadFailed);
    LoadRequest r;
    r.modelDir = QStringLiteral("/nonexistent/strata-model");
    bridge.load(r);
    QCOMPARE(bridge.state(), EngineBridge::State::Loading);
    QVERIFY(failed.wait(10000));
    QVERIFY2(
        failed.first().first().toString().contains(QStringLiteral("/nonexistent/strata-model")),
        qPrintable(failed.first().first().toString()));
    QCOMPARE(bridge.state(), EngineBridge::State::Failed);

    // Asking for a reply without a model fails the reply, not the app.
    QSignalSpy replyFailed(&bridge, &EngineBridge::replyFailed);
    const quint64 id = bridge.generate(capitalQuestion());
    QVERIFY(replyFailed.wait(10000));
    QCOMPARE(replyFailed.first().first().toULongLong(), id);
    QVERIFY(!bridge.generating());
  }

  void replyStreamsInCoalescedDeltas() {
    EngineBridge bridge;
    QSignalSpy loaded(&bridge, &EngineBridge::loaded);
    bridge.load(tinyModel());
    QVERIFY(loaded.wait(60000));
    QCOMPARE(bridge.state(), EngineBridge::State::Ready);
    QCOMPARE(bridge.modelName(), QStringLiteral("strata-tiny"));

    QSignalSpy deltas(&bridge, &EngineBridge::replyDelta);
    QSignalSpy finished(&bridge, &EngineBridge::replyFinished);
    const quint64 id = bridge.generate(capitalQuestion());
    QVERIFY(bridge.generating());
    QVERIFY(finished.wait(60000));
    QVERIFY(!bridge.generating());
    const auto outcome = finished.first().first().value<ReplyOutcome>();
    QCOMPARE(outcome.id, id);
    QCOMPARE(outcome.finishReason, QStringLiteral("stop"));
    QVERIFY2(outcome.text.contains(QStringLiteral("Paris")), qPrintable(outcome.text));
    QVERIFY(outcome.tokens > 1);
    QVERIFY(outcome.promptTokens > 5);

    QString streamed;
    for (const auto& d : deltas) {
      QCOMPARE(d.at(0).toULongLong(), id);
      streamed += d.at(1).toString();
    }
    QCOMPARE(streamed, outcome.text);  // the deltas add up to the reply, nothing lost or doubled
    QVERIFY(deltas.count() >= 1);
    // Coalesced: the tiny model makes tokens much faster than the 50 ms delivery interval.
    QVERIFY2(deltas.count() < outcome.tokens, qPrintable(QString::number(deltas.count())));
  }

  void stopEndsTheReply() {
    EngineBridge bridge;
    QSignalSpy loaded(&bridge, &EngineBridge::loaded);
    bridge.load(tinyModel());
    QVERIFY(loaded.wait(60000));
    QSignalSpy finished(&bridge, &EngineBridge::replyFinished);
    GenerateRequest r = capitalQuestion();
    r.maxTokens = 500;
    bridge.generate(r);
    // Pressed at once; the flag is read at every token. On a busy machine the worker may have
    // sampled a few tokens before this thread runs again, so "cancelled" well short of the
    // limit is the check, not a token count.
    bridge.stop();
    QVERIFY(finished.wait(60000));
    const auto outcome = finished.first().first().value<ReplyOutcome>();
    QCOMPARE(outcome.finishReason, QStringLiteral("cancelled"));
    QVERIFY2(outcome.tokens < r.maxTokens, qPrintable(QString::number(outcome.tokens)));

    // The next reply runs normally.
    finished.clear();
    bridge.generate(capitalQuestion());
    QVERIFY(finished.wait(60000));
    QCOMPARE(finished.first().first().value<ReplyOutcome>().finishReason, QStringLiteral("stop"));
  }

  void longPromptReportsPrefillProgress() {
    EngineBridge bridge;
    QSignalSpy loaded(&bridge, &EngineBridge::loaded);
    bridge.load(tinyModel());
    QVERIFY(loaded.wait(60000));
    QSignalSpy started(&bridge, &EngineBridge::replyStarted);
    QSignalSpy progress(&bridge, &EngineBridge::prefillProgress);
    QSignalSpy finished(&bridge, &EngineBridge::replyFinished);
    const quint64 id = bridge.generate(longQuestion());
    QCOMPARE(started.count(), 1);
    QCOMPARE(started.first().first().toULongLong(), id);
    QVERIFY(finished.wait(60000));
    const auto outcome = finished.first().first().value<ReplyOutcome>();
    QVERIFY2(outcome.promptTokens > 2 * 256, qPrintable(QString::number(outcome.promptTokens)));
    QVERIFY(outcome.tokens > 0);
    QVERIFY2(outcome.prefillSeconds > 0, "no time to first token");

    // In chunks: the first report is part of the way, the last the whole prompt.
    QVERIFY2(progress.count() >= 2, qPrintable(QString::number(progress.count())));
    qint64 before = 0;
    for (const auto& p : progress) {
      QCOMPARE(p.at(0).toULongLong(), id);
      QCOMPARE(p.at(2).toLongLong(), outcome.promptTokens);
      QVERIFY(p.at(1).toLongLong() > before);
      before = p.at(1).toLongLong();
    }
    QVERIFY(progress.first().at(1).toLongLong() < outcome.promptTokens);
    QCOMPARE(progress.last().at(1).toLongLong(), outcome.promptTokens);
  }

  void stopIsSeenWhileThePromptIsRead() {
    EngineBridge bridge;
    QSignalSpy loaded(&bridge, &EngineBridge::loaded);
    bridge.load(tinyModel());
    QVERIFY(loaded.wait(60000));
    QSignalSpy progress(&bridge, &EngineBridge::prefillProgress);
    QSignalSpy finished(&bridge, &EngineBridge::replyFinished);
    // Stop as the progress bar first moves (the tiny model reads a chunk in tens of ms or more).
    connect(&bridge, &EngineBridge::prefillProgress, &bridge, &EngineBridge::stop);
    bridge.generate(longQuestion());
    QVERIFY(finished.wait(60000));
    const auto outcome = finished.first().first().value<ReplyOutcome>();
    QCOMPARE(outcome.finishReason, QStringLiteral("cancelled"));
    QCOMPARE(outcome.tokens, 0);  // not one token: the rest of the prompt was never read
    QVERIFY(!progress.isEmpty());
    QVERIFY2(progress.last().at(1).toLongLong() < outcome.promptTokens,
             qPrintable(QStringLiteral("read %1 of %2")
                            .arg(progress.last().at(1).toLongLong())
                            .arg(outcome.promptTokens)));
  }

  void sessionIsSavedAndResumed() {
    QTemporaryDir dir;
    const QString kv = dir.filePath(QStringLiteral("chat.kv"));
    EngineBridge bridge;
    QSignalSpy loaded(&bridge, &EngineBridge::loaded);
    bridge.load(tinyModel());
    QVERIFY(loaded.wait(60000));
    QSignalSpy finished(&bridge, &EngineBridge::replyFinished);
    QSignalSpy tiers(&bridge, &EngineBridge::tierData);
    bridge.openConversation(kv);
    bridge.generate(capitalQuestion(kv));
    QVERIFY(finished.wait(60000));
    const auto outcome = finished.first().first().value<ReplyOutcome>();
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(kv), 10000);

    // The KV gauge's numbers after the reply: the chat's tokens and its cache's bytes (every
    // layer's rows; the MTP layer's may trail by up to two tokens, whose hidden states it holds
    // instead, less than a token's rows), against the plan's reservation for one conversation.
    const strata::MemoryPlan plan = strata::Engine::plan(STRATA_TINY_MODEL_DIR, engineSettingsFor(tinyModel()));
    QVERIFY(!tiers.isEmpty());
    const TierData after = tiers.last().first().value<TierData>();
    QVERIFY2(after.kvTokens >= outcome.promptTokens + outcome.tokens - 1 &&
                 after.kvTokens <= outcome.promptTokens + outcome.tokens,
             qPrintable(QString::number(after.kvTokens)));
    QVERIFY2(after.kvBytes < (after.kvTokens + 1) * plan.kvBytesPerToken &&
                 after.kvBytes >= (after.kvTokens - 2) * plan.kvBytesPerToken,
             qPrintable(QStringLiteral("%1 bytes for %2 tokens").arg(after.kvBytes).arg(after.kvTokens)));
    QCOMPARE(after.kvReservedBytes, plan.kvBytesPerToken * engineSettingsFor(tinyModel()).memory.contextTokens);

    // Another conversation (no cache yet: the gauge is empty), then back: the KV cache comes
    // from the file, and the gauge shows it.
    QSignalSpy resumed(&bridge, &EngineBridge::conversationResumed);
    tiers.clear();
    bridge.openConversation(dir.filePath(QStringLiteral("other.kv")));
    QTRY_VERIFY(!tiers.isEmpty());
    QCOMPARE(tiers.last().first().value<TierData>().kvTokens, 0);
    QCOMPARE(tiers.last().first().value<TierData>().kvBytes, 0);
    tiers.clear();
    bridge.openConversation(kv);
    QVERIFY(resumed.wait(10000));
    QCOMPARE(resumed.first().at(0).toString(), kv);
    // What was saved: the prompt and the reply (its last token, eos, may not be in the cache).
    const qint64 tokens = resumed.first().at(1).toLongLong();
    QVERIFY2(tokens >= outcome.promptTokens + outcome.tokens - 1,
             qPrintable(QString::number(tokens)));
    QVERIFY(tokens <= outcome.promptTokens + outcome.tokens);
    QTRY_VERIFY(!tiers.isEmpty());
    QCOMPARE(tiers.last().first().value<TierData>().kvTokens, tokens);
    QVERIFY(tiers.last().first().value<TierData>().kvBytes > 0);
  }

  void corruptKvFileFallsBackToRecompute() {
    QTemporaryDir dir;
    const QString kv = dir.filePath(QStringLiteral("broken.kv"));
    QFile f(kv);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("this is not a KV cache file, just some bytes that happen to be here");
    f.close();
    EngineBridge bridge;
    QSignalSpy loaded(&bridge, &EngineBridge::loaded);
    bridge.load(tinyModel());
    QVERIFY(loaded.wait(60000));
    QSignalSpy resumeFailed(&bridge, &EngineBridge::resumeFailed);
    QSignalSpy finished(&bridge, &EngineBridge::replyFinished);
    bridge.openConversation(kv);
    QVERIFY(resumeFailed.wait(10000));
    QVERIFY(resumeFailed.first().at(1).toString().contains(QStringLiteral("broken.kv")));
    bridge.generate(capitalQuestion(kv));
    QVERIFY(finished.wait(60000));
    const auto outcome = finished.first().first().value<ReplyOutcome>();
    QCOMPARE(outcome.reusedTokens, 0);
    QVERIFY(outcome.text.contains(QStringLiteral("Paris")));
  }

  void speculationSettingReachesTheEngineLive() {
    EngineBridge bridge;
    bridge.setSpeculation({false, 3});  // before the model: it is opened with it
    QSignalSpy loaded(&bridge, &EngineBridge::loaded);
    QSignalSpy stats(&bridge, &EngineBridge::speculationData);
    QSignalSpy finished(&bridge, &EngineBridge::replyFinished);
    bridge.load(tinyModel());
    QVERIFY(loaded.wait(60000));

    bridge.generate(capitalQuestion());
    QVERIFY(finished.wait(60000));
    const auto off = finished.first().first().value<ReplyOutcome>();
    QCOMPARE(off.drafted, 0);
    QCOMPARE(off.accepted, 0);
    QVERIFY(off.forwards > 0);
    QCOMPARE(off.tokensPerPass, 1.0);  // one token per forward pass: plain decoding
    QVERIFY(!stats.isEmpty());
    SpeculationData data = stats.last().first().value<SpeculationData>();
    // The tiny model has an MTP layer, so all three drafters are listed.
    QCOMPARE(drafterNames(data), (QStringList{QStringLiteral("mtp"), QStringLiteral("ngram"),
                                              QStringLiteral("grammar")}));
    for (const DrafterData& d : data.drafters) {
      QCOMPARE(d.mode, QStringLiteral("off"));
      QVERIFY(!d.active);
      QCOMPARE(d.rounds, 0);
    }

    // Automatic, without a reload: the next reply drafts, and says the same (lossless).
    bridge.setSpeculation({true, 3});
    finished.clear();
    stats.clear();
    bridge.generate(capitalQuestion());
    QVERIFY(finished.wait(60000));
    const auto on = finished.first().first().value<ReplyOutcome>();
    QVERIFY2(on.drafted > 0, qPrintable(QString::number(on.drafted)));
    QVERIFY2(on.accepted > 0, qPrintable(QString::number(on.accepted)));
    QVERIFY(on.accepted <= on.drafted);
    QVERIFY2(on.tokensPerPass > 1.0, qPrintable(QString::number(on.tokensPerPass)));
    QVERIFY(on.forwards < off.forwards);  // the same tokens in fewer passes
    QCOMPARE(on.text, off.text);
    QCOMPARE(loaded.count(), 1);

    QVERIFY(!stats.isEmpty());
    data = stats.last().first().value<SpeculationData>();
    const DrafterData* mtp = drafter(data, QStringLiteral("mtp"));
    QVERIFY(mtp);
    QCOMPARE(mtp->mode, QStringLiteral("auto"));
    QVERIFY(mtp->rounds > 0);
    QVERIFY(mtp->drafted >= mtp->rounds);
    QVERIFY(mtp->firstAccepted > 0 && mtp->firstAccepted <= mtp->rounds);
    QCOMPARE(mtp->acceptance, double(mtp->firstAccepted) / double(mtp->rounds));
    // What the drafters report adds up to what the reply counted.
    qint64 drafted = 0, accepted = 0;
    for (const DrafterData& d : data.drafters) {
      drafted += d.drafted;
      accepted += d.accepted;
    }
    QCOMPARE(drafted, on.drafted);
    QCOMPARE(accepted, on.accepted);
  }

  // The tiny model converted and streamed under a budget: opened with a quarter of its expert
  // memory pinned, then 60 % without a reload - the cache gives up what the pinned set takes.
  void pinnedShareChangesLive() {
    QTemporaryDir dir;
    const QString container = dir.filePath(QStringLiteral("tiny-int4"));
    strata::ConvertOptions o;
    o.input = STRATA_TINY_MODEL_DIR;
    o.output = container.toStdString();
    strata::convertModel(o);
    LoadRequest r = tinyModel();
    r.modelDir = container;
    r.memoryBudgetBytes = 1LL << 40;
    const strata::MemoryPlan roomy = strata::Engine::plan(container.toStdString(), engineSettingsFor(r));
    r.memoryBudgetBytes = roomy.residentBytes + roomy.kvBytes + roomy.scratchBytes +
                          roomy.expertCount * roomy.expertBytes / 2;
    r.tiers = {25, true};

    EngineBridge bridge;
    QSignalSpy loaded(&bridge, &EngineBridge::loaded);
    QSignalSpy failed(&bridge, &EngineBridge::loadFailed);
    QSignalSpy tiers(&bridge, &EngineBridge::tierData);
    bridge.load(r);
    QVERIFY2(loaded.wait(60000), failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
    QVERIFY(loaded.first().first().value<ModelSummary>().streaming);
    QTRY_VERIFY(!tiers.isEmpty());
    TierData d = tiers.last().first().value<TierData>();
    const qint64 experts = d.pinnedBudget + d.cacheBudget;
    QVERIFY(experts > 0);
    QVERIFY2(std::abs(double(d.pinnedBudget) / double(experts) - 0.25) < 0.01,
             qPrintable(QString::number(double(d.pinnedBudget) / double(experts))));
    // The page-cache gauge's numbers reach the app (its measurement: test_expert_store).
    // (expertBytes is the largest expert: the MTP layer's are int8, the others int4.)
    QVERIFY(d.pageCacheTotal > roomy.expertCount * roomy.expertBytes / 2);
    QVERIFY(d.pageCacheTotal <= roomy.expertCount * roomy.expertBytes);
    QVERIFY(d.pageCacheBytes >= 0 && d.pageCacheBytes <= d.pageCacheTotal);

    tiers.clear();
    bridge.setTiers({60, false});
    QTRY_VERIFY(!tiers.isEmpty());
    d = tiers.last().first().value<TierData>();
    QCOMPARE(d.pinnedBudget + d.cacheBudget, experts);
    QCOMPARE(d.pinnedBudget, experts * 60 / 100);
    QCOMPARE(loaded.count(), 1);
  }

  void mtpDraftLengthReachesTheEngine() {
    for (const int depth : {1, 4}) {
      EngineBridge bridge;
      bridge.setSpeculation({true, depth});
      QSignalSpy loaded(&bridge, &EngineBridge::loaded);
      QSignalSpy stats(&bridge, &EngineBridge::speculationData);
      QSignalSpy finished(&bridge, &EngineBridge::replyFinished);
      bridge.load(tinyModel());
      QVERIFY(loaded.wait(60000));
      // A 48-token reply: enough rounds after the plain steps the tuner measures first.
      GenerateRequest identity = capitalQuestion();
      identity.messages.first().content = QStringLiteral("Who are you?");
      bridge.generate(identity);
      QVERIFY(finished.wait(60000));
      const DrafterData* mtp =
          drafter(stats.last().first().value<SpeculationData>(), QStringLiteral("mtp"));
      QVERIFY(mtp);
      QVERIFY2(mtp->rounds > 1, qPrintable(QString::number(mtp->rounds)));
      const QString counts = QStringLiteral("depth %1: %2 drafted in %3 rounds")
                                 .arg(depth)
                                 .arg(mtp->drafted)
                                 .arg(mtp->rounds);
      if (depth == 1)
        QVERIFY2(mtp->drafted == mtp->rounds, qPrintable(counts));
      else  // fewer than `depth` only where the reply's token limit is near
        QVERIFY2(mtp->drafted > mtp->rounds && mtp->drafted <= depth * mtp->rounds,
                 qPrintable(counts));
    }
  }
};

QTEST_GUILESS_MAIN(TestEngineBridge)
#include "test_engine_bridge.moc"
