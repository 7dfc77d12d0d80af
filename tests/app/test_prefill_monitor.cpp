// What the Inside panel shows about reading the prompt: progress from the bridge's signals while
// a reply's prompt is read, then the reply's time to first token; other replies' signals and
// replies stopped before their first token leave it alone. The worker's progress reports are
// throttled to 20 a second, the first and the last always sent.
#include <QLocale>
#include <QSignalSpy>
#include <QTest>

#include "bridge/progress_throttle.h"
#include "prefill/prefill_monitor.h"

using namespace strata::app;

namespace {

ReplyOutcome outcome(quint64 id, int tokens, double prefillSeconds) {
  ReplyOutcome o;
  o.id = id;
  o.tokens = tokens;
  o.prefillSeconds = prefillSeconds;
  return o;
}

}  // namespace

class TestPrefillMonitor : public QObject {
  Q_OBJECT
 private slots:
  void progressWhileThePromptIsRead() {
    QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
    PrefillMonitor m;
    QVERIFY(!m.reading());
    QVERIFY(!m.hasTimeToFirstToken());

    m.start(7);
    QVERIFY(m.reading());
    QCOMPARE(m.fraction(), 0.0);
    QCOMPARE(m.progressText(), QStringLiteral("Reading prompt…"));  // before the first chunk

    m.update(7, 1234, 3412);
    QVERIFY(m.reading());
    QCOMPARE(m.progressText(), QStringLiteral("Reading prompt… 1,234 / 3,412 tokens"));
    QCOMPARE(m.fraction(), 1234.0 / 3412.0);
    m.update(6, 3000, 3412);  // an earlier reply's late signal
    QCOMPARE(m.done(), 1234);

    m.update(7, 3412, 3412);  // read: decoding starts
    QVERIFY(!m.reading());
    QCOMPARE(m.fraction(), 1.0);

    QSignalSpy ttft(&m, &PrefillMonitor::timeToFirstTokenChanged);
    m.finish(outcome(7, 40, 0.4123));
    QCOMPARE(ttft.count(), 1);
    QCOMPARE(m.timeToFirstTokenMs(), 412.3);
    QCOMPARE(m.timeToFirstTokenText(), QStringLiteral("412 ms"));
    m.finish(outcome(6, 10, 2.0));  // not the reply being followed
    QCOMPARE(m.timeToFirstTokenMs(), 412.3);
    QLocale::setDefault(QLocale::c());
  }

  void progressReportsAreThrottled() {
    ProgressThrottle t(50);
    QVERIFY(t.allow(64, 3412, 1000));    // the first at once
    QVERIFY(!t.allow(128, 3412, 1020));  // 20 ms later: held back
    QVERIFY(!t.allow(192, 3412, 1049));
    QVERIFY(t.allow(256, 3412, 1050));  // 50 ms after the last one sent
    QVERIFY(!t.allow(320, 3412, 1060));
    QVERIFY(t.allow(3412, 3412, 1061));  // the last always: the bar ends full
    // A short prompt read in one chunk: its only report is sent.
    ProgressThrottle once(50);
    QVERIFY(once.allow(30, 30, 5));
  }

  void aStopBeforeTheFirstTokenKeepsTheLastTime() {
    QLocale::setDefault(QLocale::c());  // no group separator
    PrefillMonitor m;
    m.start(1);
    m.finish(outcome(1, 12, 1.5));
    QCOMPARE(m.timeToFirstTokenText(), QStringLiteral("1500 ms"));

    m.start(2);
    m.update(2, 64, 900);
    m.finish(outcome(2, 0, 0.2));  // stopped while reading: no first token
    QVERIFY(!m.reading());
    QCOMPARE(m.timeToFirstTokenMs(), 1500.0);

    m.start(3);
    m.fail(3);
    QVERIFY(!m.reading());
    // Short prompts on the tiny model: a tenth of a millisecond below 10 ms.
    m.start(4);
    m.finish(outcome(4, 3, 0.00456));
    QCOMPARE(m.timeToFirstTokenText(), QStringLiteral("4.6 ms"));
  }
};

QTEST_GUILESS_MAIN(TestPrefillMonitor)
#include "test_prefill_monitor.moc"
