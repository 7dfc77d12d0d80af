// The engine bridge with the bundled tiny model: a reply streams in as coalesced deltas, stop
// works, sessions are saved and resumed, and bad input gives error signals (never a crash).
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "bridge/engine_bridge.h"

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
    bridge.stop();  // pressed before the first token: the flag is read at every token
    QVERIFY(finished.wait(60000));
    const auto outcome = finished.first().first().value<ReplyOutcome>();
    QCOMPARE(outcome.finishReason, QStringLiteral("cancelled"));
    QVERIFY(outcome.tokens <= 1);

    // The next reply runs normally.
    finished.clear();
    bridge.generate(capitalQuestion());
    QVERIFY(finished.wait(60000));
    QCOMPARE(finished.first().first().value<ReplyOutcome>().finishReason, QStringLiteral("stop"));
  }

  void sessionIsSavedAndResumed() {
    QTemporaryDir dir;
    const QString kv = dir.filePath(QStringLiteral("chat.kv"));
    EngineBridge bridge;
    QSignalSpy loaded(&bridge, &EngineBridge::loaded);
    bridge.load(tinyModel());
    QVERIFY(loaded.wait(60000));
    QSignalSpy finished(&bridge, &EngineBridge::replyFinished);
    bridge.openConversation(kv);
    bridge.generate(capitalQuestion(kv));
    QVERIFY(finished.wait(60000));
    const auto outcome = finished.first().first().value<ReplyOutcome>();
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(kv), 10000);

    // Another conversation, then back: the KV cache comes from the file.
    QSignalSpy resumed(&bridge, &EngineBridge::conversationResumed);
    bridge.openConversation(dir.filePath(QStringLiteral("other.kv")));
    bridge.openConversation(kv);
    QVERIFY(resumed.wait(10000));
    QCOMPARE(resumed.first().at(0).toString(), kv);
    // What was saved: the prompt and the reply (its last token, eos, may not be in the cache).
    const qint64 tokens = resumed.first().at(1).toLongLong();
    QVERIFY2(tokens >= outcome.promptTokens + outcome.tokens - 1,
             qPrintable(QString::number(tokens)));
    QVERIFY(tokens <= outcome.promptTokens + outcome.tokens);
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
};

QTEST_GUILESS_MAIN(TestEngineBridge)
#include "test_engine_bridge.moc"
