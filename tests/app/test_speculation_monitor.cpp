// The Inside panel's speculation figures: each drafter's state, acceptance and speed-up as the
// panel writes them, and the last reply's tokens per pass.
#include <QSignalSpy>
#include <QTest>

#include "speculation/speculation_monitor.h"

using namespace strata::app;

namespace {

DrafterData drafter(const char* name, const char* mode, bool active, qint64 rounds,
                    qint64 firstAccepted, double speedup) {
  DrafterData d;
  d.name = QString::fromLatin1(name);
  d.mode = QString::fromLatin1(mode);
  d.active = active;
  d.rounds = rounds;
  d.firstAccepted = firstAccepted;
  d.acceptance = rounds ? double(firstAccepted) / double(rounds) : 0.0;
  d.speedup = speedup;
  return d;
}

QVariantMap row(const SpeculationMonitor& m, int i) { return m.drafters().at(i).toMap(); }

}  // namespace

class TestSpeculationMonitor : public QObject {
  Q_OBJECT
 private slots:
  void draftersAreWrittenOut() {
    SpeculationMonitor m;
    QSignalSpy changed(&m, &SpeculationMonitor::statsChanged);
    QVERIFY(m.drafters().isEmpty());
    SpeculationData data;
    data.drafters = {drafter("mtp", "auto", true, 6, 5, 1.234),
                     drafter("ngram", "auto", false, 4, 1, 0.81),
                     drafter("grammar", "auto", true, 0, 0, 0)};
    m.update(data);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(m.drafters().size(), 3);

    QCOMPARE(row(m, 0)[QStringLiteral("name")].toString(), QStringLiteral("mtp"));
    QCOMPARE(row(m, 0)[QStringLiteral("label")].toString(), QStringLiteral("MTP head"));
    QCOMPARE(row(m, 0)[QStringLiteral("state")].toString(), QStringLiteral("on"));
    QCOMPARE(row(m, 0)[QStringLiteral("acceptanceText")].toString(), QStringLiteral("83 %"));
    QCOMPARE(row(m, 0)[QStringLiteral("speedupText")].toString(), QStringLiteral("×1.23"));

    // Auto but switched off by self-tuning: paused, its numbers still shown.
    QCOMPARE(row(m, 1)[QStringLiteral("state")].toString(), QStringLiteral("paused"));
    QCOMPARE(row(m, 1)[QStringLiteral("acceptanceText")].toString(), QStringLiteral("25 %"));
    QCOMPARE(row(m, 1)[QStringLiteral("speedupText")].toString(), QStringLiteral("×0.81"));

    // Never drafted: nothing measured.
    QCOMPARE(row(m, 2)[QStringLiteral("acceptanceText")].toString(), QStringLiteral("—"));
    QCOMPARE(row(m, 2)[QStringLiteral("acceptance")].toDouble(), -1.0);
    QCOMPARE(row(m, 2)[QStringLiteral("speedupText")].toString(), QStringLiteral("—"));
  }

  void offByTheSettingIsOffWhateverTheTuner() {
    SpeculationMonitor m;
    SpeculationData data;
    data.drafters = {drafter("mtp", "off", false, 10, 8, 1.5),
                     drafter("ngram", "on", true, 0, 0, 0)};
    m.update(data);
    QCOMPARE(row(m, 0)[QStringLiteral("state")].toString(), QStringLiteral("off"));
    QCOMPARE(row(m, 0)[QStringLiteral("acceptanceText")].toString(), QStringLiteral("80 %"));
    QCOMPARE(row(m, 1)[QStringLiteral("state")].toString(), QStringLiteral("on"));
  }

  void theMtpChainShowsItsDepth() {
    SpeculationMonitor m;
    SpeculationData data;
    data.drafters = {drafter("mtp", "auto", true, 10, 8, 1.5), drafter("ngram", "auto", true, 3, 1, 0.9)};
    data.drafters[0].depth = 2;
    m.update(data);
    QCOMPARE(row(m, 0)[QStringLiteral("state")].toString(), QStringLiteral("on"));
    QCOMPARE(row(m, 0)[QStringLiteral("stateText")].toString(), QStringLiteral("on · depth 2"));
    QCOMPARE(row(m, 1)[QStringLiteral("stateText")].toString(), QStringLiteral("on"));  // no depth
    data.drafters[0].active = false;  // paused by the tuner: no depth to show
    m.update(data);
    QCOMPARE(row(m, 0)[QStringLiteral("stateText")].toString(), QStringLiteral("paused"));
  }

  void lastReplysTokensPerPass() {
    SpeculationMonitor m;
    QSignalSpy changed(&m, &SpeculationMonitor::lastReplyChanged);
    QVERIFY(!m.hasLastReply());
    QCOMPARE(m.lastTokensPerPassText(), QStringLiteral("—"));
    ReplyOutcome r;
    r.forwards = 20;
    r.drafted = 45;
    r.accepted = 27;
    r.tokensPerPass = 2.35;
    m.setLastReply(r);
    QCOMPARE(changed.count(), 1);
    QVERIFY(m.hasLastReply());
    QCOMPARE(m.lastTokensPerPassText(), QStringLiteral("2.35"));
    QCOMPARE(m.lastDrafted(), 45);
    QCOMPARE(m.lastAccepted(), 27);
    // A reply stopped before its first pass has no figure.
    m.setLastReply(ReplyOutcome{});
    QCOMPARE(m.lastTokensPerPassText(), QStringLiteral("—"));
  }
};

QTEST_GUILESS_MAIN(TestSpeculationMonitor)
#include "test_speculation_monitor.moc"
